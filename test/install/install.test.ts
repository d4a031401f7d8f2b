import { execFile, execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/sandbox.js';
import {
  CJS_RECEIVER,
  CJS_TEST,
  installedSize,
  listenAndTrigger,
  optionalFeatures,
  SCENARIO,
  typechecks,
  usesMcp,
  usesTestingEntry,
} from './install-rig.js';

// Packs clockhook as `npm pack` does, installs it the ways the README says, and uses it there as a user
// would: `npx clockhook` in an app's own folder, `clockhook` from a global install. Slow (npm installs):
// one pack for the file, a minute or more per install on a busy machine. The installs run side by side, each
// in a folder of its own: the git URL's alone (npm installs every dev dependency to run `prepare`) takes as
// long as the others together.
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);
const npm = (args: string[], cwd: string) =>
  run('npm', [...args, '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'], {
    cwd,
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, npm_config_update_notifier: 'false' },
  });
const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { version: string };

let work: Awaited<ReturnType<typeof tempDir>>;
let tarball: string;
let packed: string[];

beforeAll(async () => {
  work = await tempDir('clockhook-install-');
  // As a publish packs it: prepack takes the install script out of the packed package.json, prepare builds (a build
  // that finds dist/ up to date writes nothing, so the other test files' dist/ is left alone), postpack restores.
  const { stdout } = await npm(['pack', '--json', '--pack-destination', work.path], ROOT);
  const [info] = JSON.parse(stdout) as { filename: string; files: { path: string }[] }[];
  tarball = join(work.path, info.filename);
  packed = info.files.map((f) => f.path);
}, 180_000);
afterAll(() => work?.remove());

async function newApp(name: string): Promise<string> {
  const dir = join(work.path, name);
  await run('mkdir', ['-p', dir]);
  await writeFile(join(dir, 'package.json'), JSON.stringify({ name, version: '1.0.0', private: true, type: 'module' }));
  return dir;
}

describe('the packed package', () => {
  it('carries only what it runs: bin, dist, ui, the config and scenario schemas, README, LICENSE, CHANGELOG and package.json', () => {
    const outside = packed.filter((path) => !/^(bin|dist|ui)\//.test(path));
    expect(outside.sort()).toEqual([
      'CHANGELOG.md',
      'LICENSE',
      'README.md',
      'clockhook.config.schema.json',
      'clockhook.scenario.schema.json',
      'package.json',
    ]);
    expect(packed).toContain('bin/clockhook.js');
    expect(packed).toContain('dist/index.js');
    expect(packed).toContain('ui/index.html');
    expect(packed.some((path) => path.startsWith('dist/') && path.endsWith('.test.js'))).toBe(false);
    // The builds' incremental state (tsc -b) stays home.
    expect(packed.filter((path) => path.endsWith('.tsbuildinfo'))).toEqual([]);
    // No install script in the packed manifest (npm warns of one on every install); the clone's keeps prepare.
    const manifest = JSON.parse(execFileSync('tar', ['-xzOf', tarball, 'package/package.json'], { encoding: 'utf8' }));
    expect(Object.keys(manifest.scripts)).not.toContain('prepare');
    expect(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts.prepare).toBe('npm run build');
  });

  it.concurrent(
    'installs light into an app as a dev dependency, with no warning; every command works there, mcp too',
    async () => {
      const appDir = await newApp('app-tarball');
      // npm's own warnings kept (an install script, a peer it cannot satisfy): there must be none.
      const installed = await run('npm', ['install', '-D', tarball, '--no-audit', '--no-fund', '--prefer-offline'], {
        cwd: appDir,
        env: { ...process.env, npm_config_update_notifier: 'false' },
      });
      expect(installed.stderr).not.toMatch(/warn/i);
      // What listen, the inspector, the sandbox, the captures, check, types, mcp and the testing library need, no
      // more: no dev dependency, no optional feature's packages (OpenTelemetry, Redis), the MCP SDK bundled.
      const { packages, bytes } = await installedSize(appDir);
      expect(packages).toBeLessThanOrEqual(40);
      expect(bytes).toBeLessThanOrEqual(25 * 1024 * 1024);
      for (const absent of ['typescript', '@redis/client', '@modelcontextprotocol/sdk', 'zod', 'express'])
        expect(existsSync(join(appDir, 'node_modules', absent)), absent).toBe(false);
      const { stdout } = await run('npx', ['--no-install', 'clockhook', '--version'], { cwd: appDir });
      expect(stdout.trim()).toBe(pkg.version);
      const clockhook = (...args: string[]) => run('npx', ['--no-install', 'clockhook', ...args], { cwd: appDir });
      await listenAndTrigger(appDir, async (port) => {
        const [capture] = (await clockhook('captures', 'list', '--json')).stdout
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l));
        expect(JSON.parse((await clockhook('replay', capture.id, '--json')).stdout)).toMatchObject({ status: 200 });
        expect((await clockhook('check', '--forward-to', port, '--json').catch((e) => e)).stdout).toContain('"checks"');
        expect((await clockhook('types')).stdout).toContain('punch.created');
        await usesMcp(appDir, capture.id);
      });
      await usesTestingEntry(appDir);
      await optionalFeatures(appDir);
    },
    300_000,
  );

  it.concurrent(
    'loads from CommonJS: an npm init -y app requires clockhook/testing under node:test and jest',
    async () => {
      const appDir = join(work.path, 'app-commonjs');
      await run('mkdir', ['-p', appDir]);
      await run('npm', ['init', '-y'], { cwd: appDir });
      await npm(['install', '-D', tarball], appDir);
      await writeFile(join(appDir, 'receiver.js'), CJS_RECEIVER);
      await writeFile(join(appDir, 'receiver.node.test.js'), `const { test } = require('node:test');\n${CJS_TEST}`);
      await writeFile(join(appDir, 'receiver.jest.test.js'), CJS_TEST);
      await writeFile(join(appDir, 'recorded.scenario.json'), SCENARIO);
      const node = await run(process.execPath, ['--test', 'receiver.node.test.js'], { cwd: appDir });
      expect(node.stdout).toMatch(/^# pass 3$/m);
      // jest from clockhook's own dev dependencies, run in the app's folder with its defaults (no config).
      const jest = await run(join(ROOT, 'node_modules', '.bin', 'jest'), ['--ci', 'receiver.jest.test.js'], {
        cwd: appDir,
      }).catch((error: { stdout: string; stderr: string }) => error);
      expect(jest.stderr).toMatch(/Tests: +3 passed, 3 total/);
      // Types for require too: a TypeScript file of this CommonJS package checks against them.
      await writeFile(
        join(appDir, 'typed.ts'),
        `import { playScenario, type PlayResult, signDelivery, startSandbox, type TestSandbox } from 'clockhook/testing';
import { verifySignature } from 'clockhook';
export async function typed(): Promise<boolean> {
  const sandbox: TestSandbox = await startSandbox();
  await sandbox.close();
  const signed = signDelivery({ body: '{}', secret: 'whsec_x' });
  const played: PlayResult = await playScenario('recorded.scenario.json', 'http://127.0.0.1:1/', { secret: 'whsec_x' });
  if (!played.ok) return false;
  return verifySignature({ header: signed.headers['x-service-signature'], payload: signed.body, secret: 'whsec_x' }).ok;
}
`,
      );
      await typechecks(appDir);
    },
    240_000,
  );

  it.concurrent(
    'installs globally; clockhook runs from any folder',
    async () => {
      const prefix = join(work.path, 'global');
      await npm(['install', '-g', '--prefix', prefix, tarball], work.path);
      const elsewhere = await newApp('elsewhere');
      const { stdout } = await run(join(prefix, 'bin', 'clockhook'), ['--version'], { cwd: elsewhere });
      expect(stdout.trim()).toBe(pkg.version);
    },
    240_000,
  );

  it.concurrent(
    'installs from a git URL (npm builds it with prepare); npx clockhook listen and trigger work there',
    async () => {
      const appDir = await newApp('app-git');
      await npm(['install', '-D', `git+file://${ROOT}`], appDir);
      expect(existsSync(join(appDir, 'node_modules', 'clockhook', 'dist', 'index.js'))).toBe(true);
      await listenAndTrigger(appDir);
    },
    420_000,
  );
});
