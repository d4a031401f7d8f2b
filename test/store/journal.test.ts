// The store's journal: patches replayed after a crash, torn and damaged lines, folds into the snapshot, and its forms on disk.
import { appendFile, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  type Capture,
  CaptureStore,
  readCaptureStore,
  INLINE_BODY_CHARS,
  newCaptureId,
} from '../../src/store/index.js';
import { silentLogger } from '../../src/logger.js';
import { JournalAdapter } from '../../src/store/journal.js';
import { readCaptures } from '../helpers/listen.js';
import { sampleCapture } from '../helpers/capture.js';
import { recordingLogger } from '../helpers/logger.js';
import { dir, path, useStoreFolder } from './store-folder.js';

useStoreFolder();

const capture = sampleCapture;

describe('CaptureStore: the journal and the snapshot', () => {
  it('applies updates, replays the journal after a crash, and ignores a torn last line', async () => {
    const store = await CaptureStore.open({ path });
    const first = capture('evt_a');
    await store.add(first);
    await store.update(first.id, { forward: null, pinned: true });
    // Simulate a crash: no close; a write cut short at the end of the journal.
    await appendFile(`${path}.journal`, '{"op":"put","capture":{"id":"cap_torn');
    const reopenedPath = join(dir.path, 'copy.json');
    await writeFile(reopenedPath, await readFile(path));
    await writeFile(`${reopenedPath}.journal`, await readFile(`${path}.journal`));
    const reopened = await CaptureStore.open({ path: reopenedPath });
    expect(reopened.all()).toHaveLength(1);
    expect(reopened.get(first.id)).toMatchObject({ forward: null, pinned: true });
    await reopened.close();
    await store.close();
  });

  it('folds a journal holding only a torn line before appending after it', async () => {
    const first = await CaptureStore.open({ path });
    await first.add(capture('evt_kept'));
    await first.close();
    await appendFile(`${path}.journal`, '{"op":"put","capture":{"id":"cap_torn'); // a crash cut this write
    const second = await CaptureStore.open({ path });
    await second.add(capture('evt_after_crash'));
    await second.add(capture('evt_later'));
    // Read as the next start would, before any clean close folds things again.
    expect((await readCaptures(dir.path)).map((c) => c.envelope?.id)).toEqual([
      'evt_kept',
      'evt_after_crash',
      'evt_later',
    ]);
    await second.close();
  });

  it('keeps the newest maxCaptures, in memory and after reopening', async () => {
    const store = await CaptureStore.open({ path, maxCaptures: 3 });
    for (let i = 0; i < 5; i++) await store.add(capture(`evt_${i}`));
    expect(store.all().map((c) => c.envelope?.id)).toEqual(['evt_2', 'evt_3', 'evt_4']);
    await store.close();
    const reopened = await CaptureStore.open({ path, maxCaptures: 3 });
    expect(reopened.all().map((c) => c.envelope?.id)).toEqual(['evt_2', 'evt_3', 'evt_4']);
    await reopened.close();
  });

  it('folds the journal into the snapshot once it outgrows it', async () => {
    const store = await CaptureStore.open({ path, maxCaptures: 1000, compactAfterBytes: 64 * 1024 });
    const big = 'x'.repeat(1000);
    for (let i = 0; i < 200; i++) await store.add(capture(`evt_${i}`, { body: big }));
    const snapshot = JSON.parse(await readFile(path, 'utf8')).captures.length;
    expect(snapshot).toBeGreaterThan(50);
    expect((await readFile(`${path}.journal`)).length).toBeLessThan(130 * 1024);
    expect((await readCaptures(dir.path)).length).toBe(200);
    await store.close();
  });

  it('is read whole by another process while folds rename the journal and replace the snapshot', async () => {
    const store = await CaptureStore.open({ path, maxCaptures: 1000, compactAfterBytes: 16 * 1024 });
    const big = 'x'.repeat(1000);
    let added = 0;
    const adding = (async () => {
      for (let i = 0; i < 300; i++) {
        await store.add(capture(`evt_${i}`, { body: big }));
        added = i + 1;
      }
    })();
    const seen: number[] = [];
    while (added < 300) {
      const before = added;
      const read = (await readCaptureStore(path)).captures.length;
      expect(read, `a reading after ${before} captures were durable`).toBeGreaterThanOrEqual(before);
      seen.push(read);
    }
    await adding;
    expect(seen.length).toBeGreaterThan(10);
    await store.close();
  });

  it('writes a snapshot of many captures (made in pieces) as JSON with one capture per line, and reads it back', async () => {
    const store = await CaptureStore.open({ path, maxCaptures: 5000 });
    const adds = [];
    for (let i = 0; i < 1234; i++)
      adds.push(store.add(capture(`evt_${i}`, { body: `{"n":${i},"s":"\u2028 \\ \u0022 \r é${'x'.repeat(1000)}"}` })));
    await Promise.all(adds);
    await store.close();
    const text = await readFile(path, 'utf8');
    expect(JSON.parse(text)).toEqual({ version: 1, captures: store.all() });
    // A line per capture: it is read back a line at a time, never as one string (which ends at 512 MiB),
    // in reads of 1 MiB that end in the middle of lines (and of characters).
    expect(text.split('\n')).toHaveLength(1234 + 2);
    expect(Buffer.byteLength(text)).toBeGreaterThan(1.5 * 1024 * 1024);
    const reopened = await CaptureStore.open({ path, maxCaptures: 5000 });
    expect(reopened.all()).toEqual(store.all());
    await reopened.close();
  });

  it('moves a journal damaged before its last line aside, keeping what came before the damage', async () => {
    const store = await CaptureStore.open({ path });
    await store.close();
    const [a, b] = [capture('evt_a'), capture('evt_b')];
    await writeFile(
      `${path}.journal`,
      [
        JSON.stringify({ op: 'put', capture: a }),
        '{"op":"put","capt',
        JSON.stringify({ op: 'put', capture: b }),
        '',
      ].join('\n'),
    );
    const logger = recordingLogger();
    const reopened = await CaptureStore.open({ path, logger });
    const logged = logger.warnings;
    expect(reopened.all().map((c) => c.id)).toEqual([a.id]);
    expect(logged.join('\n')).toMatch(
      /journal .*captures\.json\.journal is damaged at line 2; moved it to .*\.journal\.corrupt-/,
    );
    await reopened.close();
  });

  it('reads a snapshot in the one-line form of earlier versions, and moves one cut short aside', async () => {
    const old = capture('evt_old');
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, JSON.stringify({ version: 1, captures: [old] }));
    // And a journal line of theirs with a 3 MiB body in it (one line over several reads): the body
    // goes to a file of its own, as a new one would.
    const large = capture('evt_old_large', { body: 'L'.repeat(3 * 1024 * 1024), bodySize: 3 * 1024 * 1024 });
    await writeFile(`${path}.journal`, `${JSON.stringify({ op: 'put', capture: large })}\n`);
    const store = await CaptureStore.open({ path });
    expect(store.all()).toEqual([
      old,
      { ...large, body: 'L'.repeat(INLINE_BODY_CHARS), bodyFile: `captures.json.bodies/${large.id}` },
    ]);
    expect((await store.body(store.all()[1])).toString()).toBe(large.body);
    expect((await stat(path)).size).toBeLessThan(64 * 1024);
    await store.close();

    const whole = await readFile(path, 'utf8');
    await writeFile(path, whole.slice(0, whole.lastIndexOf(']}')));
    const logger = recordingLogger();
    const cut = await CaptureStore.open({ path, logger });
    const logged = logger.warnings;
    expect(cut.all()).toEqual([]);
    expect(logged.join('\n')).toMatch(/is corrupt; moved it to .*captures\.json\.corrupt-/);
    await cut.close();
  });

  it('leaves a capture stored while a snapshot is being written to the next journal, not half in the snapshot', async () => {
    const adapter = new JournalAdapter(path, { logger: silentLogger, now: Date.now, compactAfterBytes: 1024 });
    const data = { version: 1 as const, captures: Array.from({ length: 1200 }, (_, i) => capture(`evt_${i}`)) };
    const compacting = adapter.compact(data);
    const late = capture('evt_late');
    data.captures.push(late);
    adapter.put(late);
    await compacting;
    expect(JSON.parse(await readFile(path, 'utf8')).captures.map((c: Capture) => c.envelope?.id)).not.toContain(
      'evt_late',
    );
    adapter.append();
    await adapter.sync();
    adapter.close();
    const reread = await new JournalAdapter(path, {
      logger: silentLogger,
      now: Date.now,
      compactAfterBytes: 1024,
    }).read();
    expect(reread?.captures).toHaveLength(1201);
    expect(reread?.captures.at(-1)?.envelope?.id).toBe('evt_late');
  });

  it('reads a folded journal left beside a snapshot that already holds it (a crash before it was deleted) without reviving what retention dropped', async () => {
    const t0 = Date.now();
    const [c1, c2, c3, c4, c5, c6] = [1, 2, 3, 4, 5, 6].map((n) => ({
      ...capture(`evt_${n}`),
      id: newCaptureId(t0 + n),
    }));
    const line = (entry: object) => `${JSON.stringify(entry)}\n`;
    await mkdir(dirname(path), { recursive: true });
    // The snapshot the fold wrote, with retention at 3: c1 and c2 were dropped before it was taken.
    await writeFile(
      path,
      `{"version":1,"captures":[\n${[c3, c4, c5].map((c) => JSON.stringify({ ...c, ...(c === c4 ? { pinned: true } : {}) })).join(',\n')}\n]}`,
    );
    // The journal it folded: every change since the snapshot before, c1 and c2 included.
    await writeFile(
      `${path}.journal.folding`,
      [c1, c2, c3, c4, c5].map((c) => line({ op: 'put', capture: c })).join('') +
        line({ op: 'patch', id: c4.id, patch: { pinned: true } }),
    );
    // The journal started by the fold.
    await writeFile(`${path}.journal`, line({ op: 'put', capture: c6 }));
    const store = await CaptureStore.open({ path, maxCaptures: 3 });
    expect(store.all().map((c) => c.envelope?.id)).toEqual(['evt_4', 'evt_5', 'evt_6']);
    expect(store.get(c4.id)?.pinned).toBe(true);
    // Folded in at open: one snapshot, no journals left over.
    await expect(stat(`${path}.journal.folding`)).rejects.toThrow(/ENOENT/);
    expect(JSON.parse(await readFile(path, 'utf8')).captures.map((c: Capture) => c.envelope?.id)).toEqual([
      'evt_4',
      'evt_5',
      'evt_6',
    ]);
    await store.close();
  });
});
