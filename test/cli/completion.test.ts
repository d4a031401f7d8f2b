import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { putEndpointRecord } from '../../src/folder/index.js';
import { CaptureStore } from '../../src/store/index.js';
import { sampleCapture } from '../helpers/capture.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/sandbox.js';

const run = promisify(execFile);
let dir: Awaited<ReturnType<typeof tempDir>>;
const ids: string[] = [];

/**
 * What bash completes for `line` (the cursor at its end; a trailing space starts a new word), with the
 * script `clockhook completion bash` prints sourced, in the folder with the store.
 */
async function complete(line: string): Promise<string[]> {
  const words = line.split(' ');
  const fn = words[0] === 'npx' ? '_clockhook_npx' : '_clockhook';
  const quoted = words.map((w) => `'${w}'`).join(' ');
  const script = `source ./completion.bash; COMP_WORDS=(${quoted}); COMP_CWORD=${words.length - 1}; ${fn}; printf '%s\\n' "\${COMPREPLY[@]}"`;
  const { stdout } = await run('bash', ['-c', script], { cwd: dir.path });
  return stdout.split('\n').filter(Boolean);
}

beforeAll(async () => {
  dir = await tempDir();
  // A store and an endpoint on file as listen leaves them.
  const store = await CaptureStore.open({ path: join(dir.path, '.clockhook', 'captures.json') });
  for (const eventId of ['evt_one', 'evt_two']) {
    const capture = sampleCapture(eventId);
    await store.add(capture);
    ids.push(capture.id);
  }
  await store.close();
  const record = { apiBase: 'http://127.0.0.1:4302/', url: 'http://127.0.0.1:4300/', id: 7, secret: 'whsec_x' };
  await putEndpointRecord(join(dir.path, '.clockhook', 'endpoints.json'), { ...record, createdAt: '' }, () => false);
  for (const shell of ['bash', 'zsh', 'fish'])
    await writeFile(
      join(dir.path, `completion.${shell}`),
      (await runCli(['completion', shell], { cwd: dir.path })).stdout,
    );
}, 30_000);

afterAll(() => dir?.remove());

describe('bash completion, after clockhook and after npx clockhook', () => {
  it.each(['clockhook', 'npx clockhook'])('%s: commands, subcommands and flags', async (program) => {
    expect(await complete(`${program} cap`)).toEqual(['captures']);
    expect(await complete(`${program} relay keys `)).toEqual(['add', 'list', 'revoke', '--help']);
    expect(await complete(`${program} captures list --st`)).toEqual(['--status']);
  });

  it.each(['clockhook', 'npx clockhook'])('%s: the values of options and positionals', async (program) => {
    expect(await complete(`${program} captures export --format `)).toEqual(['har', 'curl', 'fixture', 'ndjson']);
    expect(await complete(`${program} captures list --status `)).toEqual(['2xx', 'failed', 'rejected']);
    expect(await complete(`${program} endpoints update 7 --status `)).toEqual(['enabled', 'disabled']);
    expect(await complete(`${program} completion `)).toEqual(['--help', 'bash', 'zsh', 'fish']);
  });

  it.each(['clockhook', 'npx clockhook'])('%s: event types after trigger, --type and --events', async (program) => {
    expect(await complete(`${program} trigger time_card`)).toEqual(['time_card.approved', 'time_card.rejected']);
    expect(await complete(`${program} captures list --type pay_`)).toEqual([
      'pay_period.approved',
      'pay_period.reopened',
    ]);
    expect(await complete(`${program} listen --events punch.created,time_card.a`)).toEqual([
      'punch.created,time_card.approved',
    ]);
  });

  it.each(['clockhook', 'npx clockhook'])('%s: capture, event and endpoint ids of the store here', async (program) => {
    expect(await complete(`${program} captures show cap_`)).toEqual([...ids].sort());
    expect(await complete(`${program} replay ${ids[1].slice(0, -2)}`)).toEqual([ids[1]]);
    expect(await complete(`${program} events get evt_`)).toEqual(['evt_one', 'evt_two']);
    expect(await complete(`${program} endpoints ping `)).toContain('7');
  });

  it('leaves npx running another package to the shell', async () => {
    expect(await complete('npx eslint ')).toEqual([]);
  });
});

describe('the zsh and fish scripts', () => {
  it('parse in zsh', async () => {
    await run('zsh', ['-n', 'completion.zsh'], { cwd: dir.path });
  });

  it('parse in fish, and complete after npx clockhook there', async () => {
    await run('fish', ['-n', 'completion.fish'], { cwd: dir.path });
    const { stdout } = await run(
      'fish',
      [
        '-c',
        'source completion.fish; complete -C "npx clockhook captures show cap_"; complete -C "clockhook trigger time_card.a"',
      ],
      { cwd: dir.path },
    );
    // fish orders completions itself (digits compared as numbers): the ids as a set, then the type.
    const lines = stdout.split('\n').filter(Boolean);
    expect(lines.slice(0, ids.length).sort()).toEqual([...ids].sort());
    expect(lines.slice(ids.length)).toEqual(['time_card.approved']);
  });
});
