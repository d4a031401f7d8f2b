import { appendFile, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Capture, CaptureStore, newCaptureId, StoreLockedError } from '../../src/store/index.js';
import { silentLogger } from '../../src/logger.js';
import { JournalAdapter } from '../../src/store/journal.js';
import { readCaptures } from '../helpers/listen.js';
import { tempDir } from '../helpers/sandbox.js';

let dir: { path: string; remove: () => Promise<void> };
let path: string;
beforeEach(async () => {
  dir = await tempDir();
  path = join(dir.path, '.clockhook', 'captures.json');
});
afterEach(() => dir.remove());

function capture(eventId: string, extra: Partial<Capture> = {}): Capture {
  return {
    id: newCaptureId(),
    receivedAt: new Date().toISOString(),
    source: 'delivery',
    method: 'POST',
    path: '/',
    headers: {},
    body: '{}',
    bodyEncoding: 'utf8',
    bodySize: 2,
    signature: { status: 'valid' },
    envelope: { id: eventId, type: 'punch.created', api_version: '2026-11-01', created: 1 },
    contractProblems: [],
    duplicateOf: null,
    rejected: null,
    ...extra,
  };
}

describe('CaptureStore', () => {
  it('creates the file 0600 in a 0700 folder at open', async () => {
    const store = await CaptureStore.open({ path });
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect((await stat(join(dir.path, '.clockhook'))).mode & 0o777).toBe(0o700);
    expect(JSON.parse(await readFile(path, 'utf8'))).toEqual({ version: 1, captures: [] });
    await store.close();
  });

  it('resolves add only once the capture is on disk, sharing writes between concurrent adds', async () => {
    const store = await CaptureStore.open({ path });
    const batch = Array.from({ length: 50 }, (_, i) => capture(`evt_${i}`));
    await Promise.all(batch.map((c) => store.add(c)));
    const journal = (await readFile(`${path}.journal`, 'utf8')).trim().split('\n');
    expect(journal).toHaveLength(50);
    expect((await readCaptures(dir.path)).map((c) => c.id)).toEqual(batch.map((c) => c.id));
    await store.close();
  });

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
    expect((await readCaptures(dir.path)).map((c) => c.envelope?.id)).toEqual(['evt_kept', 'evt_after_crash', 'evt_later']);
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

  it('writes a snapshot of many captures (made in pieces) that is exactly the store as JSON', async () => {
    const store = await CaptureStore.open({ path, maxCaptures: 5000 });
    const adds = [];
    for (let i = 0; i < 1234; i++) adds.push(store.add(capture(`evt_${i}`, { body: `{"n":${i},"s":"\u2028 \\ \u0022"}` })));
    await Promise.all(adds);
    await store.close();
    const text = await readFile(path, 'utf8');
    expect(text).toBe(JSON.stringify({ version: 1, captures: store.all() }));
    expect(JSON.parse(text).captures).toHaveLength(1234);
  });

  it('leaves a capture stored while a snapshot is being written to the next journal, not half in the snapshot', async () => {
    const adapter = new JournalAdapter(path, { logger: silentLogger, now: Date.now, compactAfterBytes: 1024 });
    const data = { version: 1 as const, captures: Array.from({ length: 1200 }, (_, i) => capture(`evt_${i}`)) };
    const compacting = adapter.compact(data);
    const late = capture('evt_late');
    data.captures.push(late);
    adapter.put(late);
    await compacting;
    expect(JSON.parse(await readFile(path, 'utf8')).captures.map((c: Capture) => c.envelope?.id)).not.toContain('evt_late');
    adapter.append();
    await adapter.sync();
    adapter.close();
    const reread = await new JournalAdapter(path, { logger: silentLogger, now: Date.now, compactAfterBytes: 1024 }).read();
    expect(reread?.captures).toHaveLength(1201);
    expect(reread?.captures.at(-1)?.envelope?.id).toBe('evt_late');
  });

  it('finds the first capture of an event id, pages newest first, and clears all but pinned', async () => {
    const store = await CaptureStore.open({ path });
    const a = capture('evt_a');
    const b = capture('evt_b', { pinned: true });
    const c = capture('evt_a');
    for (const x of [a, b, c]) await store.add(x);
    expect(store.firstWithEventId('evt_a')).toBe(a.id);
    expect(store.newest(2).map((x) => x.id)).toEqual([c.id, b.id]);
    expect(store.newest(2, b.id).map((x) => x.id)).toEqual([a.id]);
    expect(await store.clear()).toBe(2);
    expect(store.all().map((x) => x.id)).toEqual([b.id]);
    await store.close();
    expect((await readCaptures(dir.path)).map((x) => x.id)).toEqual([b.id]);
  });

  it('refuses a second store on the same file, takes over a stale lock, closes twice safely', async () => {
    const store = await CaptureStore.open({ path });
    await expect(CaptureStore.open({ path })).rejects.toBeInstanceOf(StoreLockedError);
    await store.close();
    await store.close();
    await writeFile(`${path}.lock`, String(2 ** 22 + 3)); // a pid that is not running
    const taken = await CaptureStore.open({ path });
    expect(await readFile(`${path}.lock`, 'utf8')).toBe(String(process.pid));
    await taken.close();
  });

  it('tells subscribers about each new and changed capture', async () => {
    const store = await CaptureStore.open({ path });
    const seen: string[] = [];
    const unsubscribe = store.subscribe((c) => seen.push(`${c.id}:${c.pinned ? 'pinned' : 'new'}`));
    const a = capture('evt_a');
    await store.add(a);
    await store.update(a.id, { pinned: true });
    unsubscribe();
    await store.add(capture('evt_b'));
    expect(seen).toEqual([`${a.id}:new`, `${a.id}:pinned`]);
    await store.close();
  });
});
