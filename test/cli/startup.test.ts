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

/** The package names a command imports (bare specifiers), as the import hook records them. */
async function packagesOf(name: string, args: string[]): Promise<string[]> {
  const log = join(dir.path, `${name}.log`);
  await runCli(args, { cwd: dir.path, env: { NODE_OPTIONS: `--import ${HOOK}`, IMPORTS_LOG: log } });
  const specifiers = (await readFile(log, 'utf8')).split('\n');
  return [...new Set(specifiers.filter((s) => /^(@[\w.-]+\/)?[\w.-]+$/.test(s)))];
}

describe('a CLI start', () => {
  it('loads no Redis client, metrics, browser opener or WebSocket for a command that does not use them', async () => {
    const captures = await packagesOf('captures', ['captures', 'list', '--json']);
    expect(captures).toContain('commander'); // the hook sees the CLI's imports
    for (const unused of ['@redis/client', 'prom-client', 'open', 'ws']) expect(captures).not.toContain(unused);
    // The check can fail: the command that uses Redis loads its client (and fails to reach it here).
    const keys = await packagesOf('keys', ['relay', 'keys', 'list', '--redis', 'redis://127.0.0.1:1']);
    expect(keys).toContain('@redis/client');
  }, 60_000);
});
