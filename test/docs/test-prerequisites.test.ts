import { execFile } from 'node:child_process';
import { chmod, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/sandbox.js';

// The README's test command first checks the programs the suite drives (scripts/test-prerequisites.mjs, the
// pretest of npm test). Where it cannot install them (here: no apt-get on the PATH it is given), it stops
// before any test, naming them and the command that installs them.
const SCRIPT = fileURLToPath(new URL('../../scripts/test-prerequisites.mjs', import.meta.url));
let bin: Awaited<ReturnType<typeof tempDir>>;

function check(path: string): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [SCRIPT], { env: { PATH: path } }, (error, _stdout, stderr) =>
      resolve({ code: error ? Number(error.code) : 0, stderr }),
    );
  });
}

beforeAll(async () => {
  bin = await tempDir();
});
afterAll(() => bin.remove());

describe("the test command's prerequisites", () => {
  it('stops at once without them, naming each and the command that installs them', async () => {
    const { code, stderr } = await check(bin.path);
    expect(code).toBe(1);
    expect(stderr).toContain('npm test needs chromium, firefox-esr, redis-server, zsh, fish');
    expect(stderr).toContain('sudo apt-get install -y chromium firefox-esr redis-server zsh fish');
    expect(stderr.trim().split('\n').filter(Boolean)).toHaveLength(3);
  });

  it('names only the ones missing, and goes on when every one is there', async () => {
    for (const program of ['chromium', 'firefox-esr', 'zsh']) {
      await writeFile(join(bin.path, program), '#!/bin/sh\n');
      await chmod(join(bin.path, program), 0o755);
    }
    const partial = await check(bin.path);
    expect(partial.code).toBe(1);
    expect(partial.stderr).toContain('npm test needs redis-server, fish, which are not on PATH');
    expect(partial.stderr).toContain('sudo apt-get install -y redis-server fish');
    for (const program of ['redis-server', 'fish']) {
      await writeFile(join(bin.path, program), '#!/bin/sh\n');
      await chmod(join(bin.path, program), 0o755);
    }
    expect(await check(bin.path)).toEqual({ code: 0, stderr: '' });
  });
});
