// Before `npm test` (its pretest) and in CI (.ci/run runs npm test): the programs the suite drives, found on
// PATH. The page's tests drive Debian's Chromium and Firefox ESR, the relay's start a redis-server of their
// own, and the completion scripts are parsed by zsh and fish. Missing ones stop the run here, before any test,
// naming them and the command that installs them; they are installed (apt-get, as root on Debian or Ubuntu) only
// when asked: `npm run test:setup`. No test is skipped for want of one.
import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/** Each program the suite needs, with the Debian package that has it. */
const NEEDED = [
  { program: 'chromium', pkg: 'chromium' },
  { program: 'firefox-esr', pkg: 'firefox-esr' },
  { program: 'redis-server', pkg: 'redis-server' },
  { program: 'zsh', pkg: 'zsh' },
  { program: 'fish', pkg: 'fish' },
];

/** Where `program` is on PATH, or null. */
function onPath(program) {
  for (const dir of (process.env.PATH ?? '').split(delimiter).filter(Boolean)) {
    try {
      accessSync(join(dir, program), constants.X_OK);
      return join(dir, program);
    } catch {
      // not in this folder
    }
  }
  return null;
}

const missing = () => NEEDED.filter(({ program }) => !onPath(program));

function installWithApt(packages) {
  console.error(`npm run test:setup: installing what the tests need: ${packages.join(' ')} (apt-get)`);
  const run = (args) =>
    spawnSync('apt-get', args, { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  if (run(['update']).status !== 0) return false;
  return run(['install', '-y', '--no-install-recommends', ...packages]).status === 0;
}

/** The command that installs `packages` here: apt-get as root, with sudo otherwise; else the system's own. */
function installCommand(packages) {
  if (onPath('apt-get') === null) return null;
  return `${process.getuid?.() === 0 ? '' : 'sudo '}apt-get install -y ${packages}`;
}

// Installing is asked for (npm run test:setup, or CLOCKHOOK_TEST_INSTALL=1; .ci/run asks), never a side effect of
// npm test: as root with apt-get, the missing packages are installed; otherwise they are named.
const install = process.argv.includes('--install') || process.env.CLOCKHOOK_TEST_INSTALL === '1';
let absent = missing();
const canInstall = process.getuid?.() === 0 && onPath('apt-get') !== null;
if (absent.length > 0 && install && canInstall && installWithApt(absent.map(({ pkg }) => pkg))) absent = missing();
if (absent.length > 0) {
  const programs = absent.map(({ program }) => program).join(', ');
  const packages = absent.map(({ pkg }) => pkg).join(' ');
  const command = installCommand(packages);
  const how = command
    ? `Install ${absent.length === 1 ? 'it' : 'them'}, then run npm test again:\n\n  ${command}\n`
    : `Install ${absent.length === 1 ? 'it' : 'them'} with your system's packages of the same names (${packages}), then run npm test again.\n`;
  const asRoot = command && process.getuid?.() === 0 && !install ? ' (npm run test:setup does it for you)' : '';
  console.error(
    `npm test needs ${programs}, which ${absent.length === 1 ? 'is' : 'are'} not on PATH${install && canInstall ? ' (apt-get could not install them)' : ''}. ${how}\nnpm run test:unit runs the tests that need none of them${asRoot ? `; as root on Debian or Ubuntu, npm run test:setup installs them` : ''}. CONTRIBUTING.md says what each is for.`,
  );
  process.exit(1);
}
