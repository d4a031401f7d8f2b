import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/sandbox.js';

// Every command starts by loading the whole program (commander needs each command's flags for help and
// completion), so what a command's module loads at its top, every command pays for: the relay's Redis
// client and Prometheus metrics cost a CLI start about 0.15 s of 0.44 s. They are loaded when used.
const HOOK = fileURLToPath(new URL('../fixtures/record-imports.mjs', import.meta.url));

let dir: Awaited<ReturnType<typeof tempDir>>;
beforeAll(async () => {
  dir = await tempDir();
});
afterAll(() => dir?.remove());

/** What a command imports, as the import hook records it: each specifier, and the URL it resolved to. */
async function importsOf(name: string, args: string[]): Promise<string[]> {
  const log = join(dir.path, `${name}.log`);
  await runCli(args, { cwd: dir.path, env: { NODE_OPTIONS: `--import ${HOOK}`, IMPORTS_LOG: log } });
  return (await readFile(log, 'utf8')).split('\n');
}

/** The package names a command imports (bare specifiers). */
async function packagesOf(name: string, args: string[]): Promise<string[]> {
  const lines = await importsOf(name, args);
  return [...new Set(lines.filter((s) => /^(@[\w.-]+\/)?[\w.-]+$/.test(s)))];
}

describe('a CLI start', () => {
  it('loads no Redis client, metrics, browser opener or WebSocket for a command that does not use them', async () => {
    const captures = await packagesOf('captures', ['captures', 'list', '--json']);
    expect(captures).toContain('commander'); // the hook sees the CLI's imports
    for (const unused of ['@redis/client', 'prom-client', 'open', 'ws', 'http-proxy', 'lowdb'])
      expect(captures).not.toContain(unused);
    // The check can fail: the command that uses Redis loads its client (and fails to reach it here).
    const keys = await packagesOf('keys', ['relay', 'keys', 'list', '--redis', 'redis://127.0.0.1:1']);
    expect(keys).toContain('@redis/client');
  }, 60_000);

  // A command's module loads the libraries it runs when it runs (`await import` in its action), and imports the
  // leaves it needs to define its flags, not a component's index: see docs/performance-notes.md, "A CLI start".
  it('loads none of the running parts of listen, the store, the sandbox, the relay or the check for endpoints list', async () => {
    const loaded = (await importsOf('endpoints', ['endpoints', 'list'])).filter((url) => url.includes('/dist/'));
    expect(loaded.some((url) => url.endsWith('/dist/cli/endpoints.js'))).toBe(true); // the hook sees the CLI's modules
    const running = [
      'listen/start',
      'listener/listener',
      'store/capture-store',
      'inspector/',
      'sandbox/',
      'relay/',
      'check/',
    ];
    expect(loaded.filter((url) => running.some((part) => url.includes(`/dist/${part}`)))).toEqual([]);
  });
});
