import { defineConfig, mergeConfig } from 'vitest/config';
import suite from './vitest.config.js';

/**
 * `npm run test:unit`: every test that needs no browser (Chromium, Firefox), no redis-server and no shell other
 * than bash, nor npm installing packages; CONTRIBUTING.md says which are left out and what each needs.
 */
export const NEEDS_MORE = [
  '**/*.browser.test.ts', // Chromium or Firefox
  'test/captures/types.test.ts', // Chromium: the page marks a drifted delivery
  'test/relay/keys.test.ts', // redis-server
  'test/relay/redis.test.ts',
  'test/relay/scale.test.ts',
  'test/cli/completion.test.ts', // zsh and fish parse the completion scripts
  'test/install/**', // npm installs the packed package (the registry, a minute or more)
  'test/examples/**', // npm installs the examples' packages
];

// Four files at a time: without browsers, these mostly wait on child processes and sockets (a minute and a half
// on two cores, where two at a time take over two).
export default mergeConfig(suite, defineConfig({ test: { exclude: NEEDS_MORE, maxWorkers: 4 } }));
