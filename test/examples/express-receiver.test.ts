import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';

// The example installs its own packages (Express, and clockhook from this folder), then its tests run as a
// user runs them: under node:test and under vitest.
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const EXAMPLE = join(ROOT, 'examples', 'express-receiver');
const run = promisify(execFile);

beforeAll(async () => {
  await run(
    'npm',
    ['install', '--no-audit', '--no-fund', '--prefer-offline', '--no-package-lock', '--loglevel=error'],
    {
      cwd: EXAMPLE,
    },
  );
}, 180_000);

describe('examples/express-receiver', () => {
  it('passes its tests under node:test', async () => {
    const { stdout } = await run(process.execPath, ['--test', 'test/receiver.node.test.mjs'], { cwd: EXAMPLE });
    expect(stdout).toMatch(/^# pass 6$/m);
    expect(stdout).toMatch(/^# fail 0$/m);
  }, 60_000);

  it('passes its tests under vitest', async () => {
    const vitest = join(ROOT, 'node_modules', '.bin', 'vitest');
    const { stdout } = await run(vitest, ['run', '--root', EXAMPLE, '--reporter', 'verbose'], { cwd: EXAMPLE });
    expect(stdout).toMatch(/Tests\s+.*6 passed/);
  }, 60_000);
});
