import { defineConfig } from 'vitest/config';

// The node:test file is Node's runner's (npm test); this runner takes its own.
export default defineConfig({ test: { include: ['test/*.vitest.test.mjs'] } });
