import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CaptureStore } from '../../src/store/index.js';
import { sampleCapture } from '../helpers/capture.js';
import { runCli } from '../helpers/cli.js';
import { envelopeBody } from '../helpers/delivery.js';
import { tempDir } from '../helpers/sandbox.js';

// Every file a command writes where the user says (captures export -o, a fixture folder, types -o, init): one rule
// for a missing folder, a file in the way and a folder that takes no files (/proc), the same words each time, and
// nothing made above what was named. A store of two captures, written as listen writes it, in a folder of its own.
let t: Awaited<ReturnType<typeof tempDir>>;
const cli = (...args: string[]) => runCli(args, { cwd: t.path });

beforeAll(async () => {
  t = await tempDir();
  const store = await CaptureStore.open({ path: join(t.path, '.clockhook', 'captures.json') });
  for (const id of ['evt_out_1', 'evt_out_2']) {
    const body = envelopeBody(id);
    await store.add(sampleCapture(id, { body, bodySize: Buffer.byteLength(body), forward: null }));
  }
  await store.close();
});

afterAll(() => t?.remove());

describe('every file a command writes where it is told (-o, init)', () => {
  it('says a missing folder, a file in the way and a folder that takes no files alike, making nothing', async () => {
    await writeFile(join(t.path, 'a-file'), 'in the way');
    const missing = join(t.path, 'no-such-folder');
    const outputs = [
      ['types', '-o', 'x.ts'],
      ...['har', 'curl', 'ndjson', 'scenario'].map((format) => ['captures', 'export', '--format', format, '-o', 'x']),
      ['captures', 'export', '--format', 'fixture', '-o', 'fixtures/'],
    ];
    const places = [
      [missing, `its folder ${missing} does not exist: make it first (mkdir -p ${missing})`],
      [join(t.path, 'a-file'), 'part of that path is a file, not a folder'],
      ['/proc', 'the folder /proc takes no new files (a file system such as /proc)'],
    ];
    // The 18 runs side by side, three at a time: each is a CLI start, and they do not touch each other.
    const runs = outputs.flatMap((args) => places.map(([folder, reason]) => ({ args, folder, reason })));
    for (let i = 0; i < runs.length; i += 3)
      await Promise.all(
        runs.slice(i, i + 3).map(async ({ args, folder, reason }) => {
          const path = join(folder, args.at(-1)!);
          const res = await cli(...args.slice(0, -1), path);
          expect(res, `${args.join(' ')} in ${folder}`).toMatchObject({ code: 1, stdout: '' });
          expect(res.stderr).toBe(
            `clockhook: --output ${path}: cannot write it: ${reason}. Give a path in a folder you can write to.\n`,
          );
        }),
      );
    expect(existsSync(missing)).toBe(false);
    // init writes in the folder it runs in, with the same words.
    const init = await runCli(['init'], { cwd: '/proc' });
    expect(init.stderr).toBe(
      'clockhook: /proc/clockhook.config.json: cannot write it: the folder /proc takes no new files (a file system such as /proc). Give a path in a folder you can write to.\n',
    );
  }, 30_000);

  it('writes a scenario whose $schema is found from where it is written', async () => {
    await mkdir(join(t.path, 'test'), { recursive: true });
    const path = join(t.path, 'test', 'morning.scenario.json');
    expect((await cli('captures', 'export', '--format', 'scenario', '-o', 'test/morning.scenario.json')).code).toBe(0);
    const { $schema } = JSON.parse(await readFile(path, 'utf8')) as { $schema: string };
    expect($schema.startsWith('.')).toBe(true);
    expect(JSON.parse(await readFile(join(dirname(path), $schema), 'utf8')).title).toMatch(/scenario/i);
  });
});
