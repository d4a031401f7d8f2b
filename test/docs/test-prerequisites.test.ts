import { execFile } from 'node:child_process';
import { chmod, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/sandbox.js';

// The README's test command first checks the programs the suite drives (scripts/test-prerequisites.mjs, the
// pretest of npm test): without them it stops before any test, naming them and the command that installs them,
// and installs nothing unless asked (npm run test:setup). Run as root (this suite's user) and as nobody, with a
// PATH of fake programs, an apt-get among them that notes each time it is run.
const SCRIPT = fileURLToPath(new URL('../../scripts/test-prerequisites.mjs', import.meta.url));
let bin: Awaited<ReturnType<typeof tempDir>>;
/** util-linux's, on Debian: runs a command as another user (this suite runs as root). */
const RUNUSER = '/usr/sbin/runuser';

function check(path: string, { as = 'self', args = [] as string[] } = {}): Promise<{ code: number; stderr: string }> {
  const node = [process.execPath, SCRIPT, ...args];
  const [command, ...rest] = as === 'nobody' ? [RUNUSER, '-u', as, '--', ...node] : node;
  return new Promise((resolve) => {
    execFile(command, rest, { env: { PATH: path } }, (error, _stdout, stderr) =>
      resolve({ code: error ? Number(error.code) : 0, stderr }),
    );
  });
}

async function fake(program: string, script = '#!/bin/sh\n'): Promise<void> {
  await writeFile(join(bin.path, program), script);
  await chmod(join(bin.path, program), 0o755);
}

beforeAll(async () => {
  bin = await tempDir();
  await chmod(bin.path, 0o777); // nobody runs from it, and apt-get notes there
});
afterAll(() => bin.remove());

describe("the test command's prerequisites", () => {
  it("stops at once without them, naming each and the command that installs them, or the system's packages", async () => {
    const { code, stderr } = await check(bin.path);
    expect(code).toBe(1);
    expect(stderr).toContain('npm test needs chromium, firefox-esr, redis-server, zsh, fish, which are not on PATH');
    expect(stderr).toContain(
      "with your system's packages of the same names (chromium firefox-esr redis-server zsh fish)",
    );
    expect(stderr).toContain('npm run test:unit runs the tests that need none of them');
  });

  it('installs nothing unless asked: the command as root, with sudo otherwise, and test:setup as root', async () => {
    await fake('apt-get', `#!/bin/sh\necho "$@" >> ${bin.path}/apt-get-ran\nexit 1\n`);
    // Run as root (as CI does), then as nobody; a contributor who is not root is the second case only.
    const root = process.getuid?.() === 0;
    if (root) {
      const said = await check(bin.path);
      expect(said.code).toBe(1);
      expect(said.stderr).toContain('\n  apt-get install -y chromium firefox-esr redis-server zsh fish\n');
      expect(said.stderr).toContain('as root on Debian or Ubuntu, npm run test:setup installs them');
    }
    const notRoot = await check(bin.path, { as: root ? 'nobody' : 'self' });
    expect(notRoot.code).toBe(1);
    expect(notRoot.stderr).toContain('\n  sudo apt-get install -y chromium firefox-esr redis-server zsh fish\n');
    expect(await readdir(bin.path)).not.toContain('apt-get-ran');
    // Asked (npm run test:setup) as root: apt-get is run; here it fails, and that is said.
    if (root) {
      const asked = await check(bin.path, { args: ['--install'] });
      expect(asked.stderr).toContain('(apt-get could not install them)');
      expect(await readdir(bin.path)).toContain('apt-get-ran');
    }
  });

  it('names only the ones missing, and goes on when every one is there', async () => {
    for (const program of ['chromium', 'firefox-esr', 'zsh']) await fake(program);
    const partial = await check(bin.path);
    expect(partial.code).toBe(1);
    expect(partial.stderr).toContain('npm test needs redis-server, fish, which are not on PATH');
    expect(partial.stderr).toContain('apt-get install -y redis-server fish');
    for (const program of ['redis-server', 'fish']) await fake(program);
    expect(await check(bin.path)).toEqual({ code: 0, stderr: '' });
  });
});
