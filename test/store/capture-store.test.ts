import { ForeignPathError, StoreLockedError } from '../../src/folder/index.js';
import { chmod, mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { execFile } from 'node:child_process';
import { dirname, join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import {
  bodyPreview,
  type Capture,
  CaptureStore,
  encodeBody,
  encodeBodyHead,
  INLINE_BODY_CHARS,
} from '../../src/store/index.js';
import { readCaptures } from '../helpers/listen.js';
import { sampleCapture } from '../helpers/capture.js';
import { recordingLogger } from '../helpers/logger.js';
import { dir, path, useStoreFolder } from './store-folder.js';

useStoreFolder();

const run = promisify(execFile);

const capture = sampleCapture;

describe('CaptureStore', () => {
  it("serializes a capture once for the journal and the page: the text handed on with a change is JSON.stringify's", async () => {
    const store = await CaptureStore.open({ path });
    const told: { capture: Capture; text: string | undefined }[] = [];
    store.subscribe((capture, text) => told.push({ capture, text }));
    try {
      const stored = capture('evt_json', { body: '{"note":"Zoë → café"}' });
      await store.add(stored);
      const forward = {
        target: 'http://app/',
        statusCode: 200,
        headers: {},
        body: 'ok',
        bodyEncoding: 'utf8' as const,
        durationMs: 3,
      };
      for (const patch of [{ forward }, { pinned: true }, { forward: { ...forward, statusCode: 500 } }])
        await store.update(stored.id, patch);
      expect(told.map((t) => t.capture)).toEqual([1, 2, 3, 4].map(() => expect.objectContaining({ id: stored.id })));
      // The new capture's text and its answered state's, made from it; the store keeps none after the answer, so a
      // later change (a pin) is handed on without one, and the page serializes it.
      expect(told.map((t) => t.text)).toEqual([
        JSON.stringify(told[0].capture),
        JSON.stringify(told[1].capture),
        undefined,
        undefined,
      ]);
    } finally {
      await store.close();
    }
  });

  it('creates the file 0600 in a 0700 folder at open', async () => {
    const store = await CaptureStore.open({ path });
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect((await stat(join(dir.path, '.clockhook'))).mode & 0o777).toBe(0o700);
    expect(JSON.parse(await readFile(path, 'utf8'))).toEqual({ version: 1, captures: [] });
    await store.close();
  });

  it('leaves the mode of a folder the user chose as it is, and tightens its own .clockhook folder', async () => {
    // `--db /tmp/captures.json` made /tmp 0700 for everyone, and `--db ./captures.json` the project folder.
    const shared = join(dir.path, 'shared');
    await mkdir(shared, { mode: 0o755 });
    await chmod(shared, 0o755);
    const chosen = await CaptureStore.open({ path: join(shared, 'captures.json') });
    await chosen.close();
    expect((await stat(shared)).mode & 0o777).toBe(0o755);
    expect((await stat(join(shared, 'captures.json'))).mode & 0o777).toBe(0o600);
    expect(await readdir(shared)).not.toContain('.gitignore');
    await mkdir(dirname(path), { mode: 0o755 });
    await chmod(dirname(path), 0o755);
    const own = await CaptureStore.open({ path });
    await own.close();
    expect((await stat(dirname(path))).mode & 0o777).toBe(0o700);
  });

  it('refuses a file that is not a capture store, leaving it as it was, and moves aside a damaged store of its own', async () => {
    // `--db package.json` (or /etc/passwd, as root) was renamed to ….corrupt-<time> and replaced.
    const foreign = join(dir.path, 'package.json');
    await writeFile(foreign, '{"name":"my-app","version":"1.0.0"}\n');
    await expect(CaptureStore.open({ path: foreign })).rejects.toThrow(
      new ForeignPathError(
        `${foreign} is not a clockhook capture store: it does not begin as clockhook writes one, so it is left as it is. Give --db a file clockhook made, or a path where no file is yet.`,
      ),
    );
    expect(await readFile(foreign, 'utf8')).toBe('{"name":"my-app","version":"1.0.0"}\n');
    expect((await readdir(dir.path)).sort()).toEqual(['package.json']);

    // A damaged store outside .clockhook still begins as one: it is clockhook's, and moved aside.
    const chosen = join(dir.path, 'captures.json');
    const store = await CaptureStore.open({ path: chosen });
    await store.add(capture('evt_kept'));
    await store.close();
    const whole = await readFile(chosen, 'utf8');
    await writeFile(chosen, whole.slice(0, whole.lastIndexOf(']}')));
    const logger = recordingLogger();
    const reopened = await CaptureStore.open({ path: chosen, logger });
    await reopened.close();
    expect(logger.warnings.join('\n')).toMatch(/captures\.json is corrupt; moved it to .*captures\.json\.corrupt-/);
  });

  it("leaves another program's files beside a store as they are: its journal's name, and its bodies folder", async () => {
    const notes = join(dir.path, 'notes');
    await writeFile(`${notes}.journal`, 'Monday: call the bank\nTuesday: nothing\n');
    await expect(CaptureStore.open({ path: notes })).rejects.toThrow(
      new ForeignPathError(
        `${notes}.journal is not a clockhook capture journal: it does not begin as one, so it is left as it is. Give --db another path.`,
      ),
    );
    expect(await readFile(`${notes}.journal`, 'utf8')).toBe('Monday: call the bank\nTuesday: nothing\n');

    // A body left by a crash is removed at open; a file clockhook did not name is not.
    const chosen = join(dir.path, 'captures.json');
    await mkdir(`${chosen}.bodies`);
    await writeFile(join(`${chosen}.bodies`, 'cap_000000000000orph'), 'a body no capture names');
    await writeFile(join(`${chosen}.bodies`, 'README.txt'), 'mine');
    const store = await CaptureStore.open({ path: chosen });
    await store.close();
    expect(await readdir(`${chosen}.bodies`)).toEqual(['README.txt']);
  });

  it('refuses a folder as its path before making anything beside it', async () => {
    const folder = join(dir.path, 'state');
    await mkdir(folder);
    await expect(CaptureStore.open({ path: folder })).rejects.toThrow(
      new ForeignPathError(
        `${folder} is a folder, not a file. Give --db a file path, such as ${join(folder, 'captures.json')}.`,
      ),
    );
    expect(await readdir(dir.path)).toEqual(['state']);
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

  it('finds the captures of an event id, pages newest first, and clears all but pinned', async () => {
    const store = await CaptureStore.open({ path });
    const a = capture('evt_a');
    const b = capture('evt_b', { pinned: true });
    const c = capture('evt_a');
    for (const x of [a, b, c]) await store.add(x);
    expect(store.ofEvent('evt_a').map((x) => x.id)).toEqual([a.id, c.id]);
    expect(store.newest(2).map((x) => x.id)).toEqual([c.id, b.id]);
    expect(store.newest(2, b.id).map((x) => x.id)).toEqual([a.id]);
    expect(await store.clear()).toBe(2);
    expect(store.all().map((x) => x.id)).toEqual([b.id]);
    await store.close();
    expect((await readCaptures(dir.path)).map((x) => x.id)).toEqual([b.id]);
  });

  it("keeps an event's captures, replays too, as retention and Clear let them go", async () => {
    const store = await CaptureStore.open({ path, maxCaptures: 3 });
    const [a1, a2] = [capture('evt_a'), capture('evt_a')];
    const replay = capture('evt_a', { source: 'replay', replayOf: a1.id });
    for (const x of [a1, replay, a2]) await store.add(x);
    expect(store.ofEvent('evt_a').map((x) => x.id)).toEqual([a1.id, replay.id, a2.id]);
    await store.add(capture('evt_b')); // retention drops a1
    expect(store.ofEvent('evt_a').map((x) => x.id)).toEqual([replay.id, a2.id]);
    await store.update(a2.id, { pinned: true });
    expect(store.ofEvent('evt_a')[1].pinned).toBe(true); // the capture as it is now
    await store.add(capture('evt_c'));
    await store.add(capture('evt_d')); // and now the replay and a2
    expect(store.ofEvent('evt_a')).toEqual([]);

    const [c1, c2, c3] = [capture('evt_e'), capture('evt_e'), capture('evt_e', { pinned: true })];
    for (const x of [c1, c2, c3]) await store.add(x);
    await store.clear();
    expect(store.ofEvent('evt_e').map((x) => x.id)).toEqual([c3.id]);
    await store.close();
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
    // In .clockhook, a lock a crash left empty is clockhook's too.
    await writeFile(`${path}.lock`, '');
    const again = await CaptureStore.open({ path });
    await again.close();
  });

  it("leaves another program's file where its lock would go (--db Gemfile: Gemfile.lock) as it is", async () => {
    const store = join(dir.path, 'Gemfile');
    await writeFile(`${store}.lock`, 'GEM\n  remote: https://rubygems.org/\n');
    await expect(CaptureStore.open({ path: store })).rejects.toThrow(
      new ForeignPathError(
        `${store}.lock is not a clockhook lock (it holds something else), so it is left as it is: give --db another path. (If clockhook left it, empty after a crash, delete it.)`,
      ),
    );
    expect(await readFile(`${store}.lock`, 'utf8')).toBe('GEM\n  remote: https://rubygems.org/\n');
    expect(await readdir(dir.path)).toEqual(['Gemfile.lock']);
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

describe('CaptureStore: bodies over 16 KiB', () => {
  const bodiesDir = () => `${path}.bodies`;
  const bigCapture = (eventId: string, bytes: Buffer) =>
    capture(eventId, { ...encodeBody(bytes), bodySize: bytes.length });

  it('keeps them in a 0600 file of their own, with only their beginning in memory and the journal', async () => {
    const store = await CaptureStore.open({ path });
    const text = Buffer.from(`{"id":"evt_big","pad":"${'é'.repeat(60_000)}"}`);
    const bytes = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.alloc(40_000, 7)]); // not UTF-8: base64
    const utf8 = bigCapture('evt_text', text);
    const binary = bigCapture('evt_bytes', bytes);
    await store.add(utf8);
    await store.add(binary);

    const [keptText, keptBytes] = store.all();
    expect(keptText).toMatchObject({
      bodyFile: `captures.json.bodies/${utf8.id}`,
      bodyEncoding: 'utf8',
      bodySize: text.length,
    });
    expect(keptText.body).toBe(utf8.body.slice(0, INLINE_BODY_CHARS));
    expect(keptBytes).toMatchObject({ bodyFile: `captures.json.bodies/${binary.id}`, bodyEncoding: 'base64' });
    expect(Buffer.from(keptBytes.body, 'base64').equals(bytes.subarray(0, (INLINE_BODY_CHARS / 4) * 3))).toBe(true);
    expect((await stat(join(bodiesDir(), utf8.id))).mode & 0o777).toBe(0o600);
    expect((await stat(bodiesDir())).mode & 0o777).toBe(0o700);
    expect((await readFile(`${path}.journal`)).length).toBeLessThan(
      Buffer.byteLength(keptText.body) + keptBytes.body.length + 4096,
    );
    expect((await store.body(keptText)).equals(text)).toBe(true);
    expect((await store.body(keptBytes)).equals(bytes)).toBe(true);
    await store.close();

    // Named the way a user may name it (`--db ./.clockhook/captures.json`): the same files.
    const reopened = await CaptureStore.open({
      path: `${relative(process.cwd(), dir.path)}/./.clockhook/captures.json`,
    });
    expect((await reopened.body(reopened.get(binary.id) as Capture)).equals(bytes)).toBe(true);
    // The file name comes from the store file; it may not lead out of the bodies folder.
    await expect(reopened.body({ ...keptText, bodyFile: 'captures.json' })).rejects.toThrow(/not a file in/);
    await reopened.close();
  });

  it('holds only the beginning in memory, not the whole body behind it', async () => {
    // In a child with --expose-gc, so that what is still held can be weighed after a full collection.
    const script = `
      const { CaptureStore, newCaptureId } = await import(${JSON.stringify(pathToFileURL(join(process.cwd(), 'dist/store/index.js')).href)});
      const store = await CaptureStore.open({ path: ${JSON.stringify(path)} });
      for (let i = 0; i < 40; i++) {
        const body = String(i).repeat(4 * 1024 * 1024);
        await store.add({ id: newCaptureId(), receivedAt: '', source: 'delivery', method: 'POST', path: '/', headers: {}, body, bodyEncoding: 'utf8',
          bodySize: body.length, signature: { status: 'unchecked' }, envelope: null, contractProblems: [], duplicateOf: null, rejected: null });
      }
      globalThis.gc();
      console.log(process.memoryUsage().heapUsed);
      await store.close();`;
    const { stdout } = await run(process.execPath, ['--expose-gc', '--input-type=module', '-e', script]);
    // 40 bodies of 4 MiB would be 160 MiB; their beginnings are 640 KiB.
    expect(Number(stdout) / 2 ** 20).toBeLessThan(24);
  });

  it('never splits a UTF-16 pair at the cut', () => {
    const body = `${'a'.repeat(INLINE_BODY_CHARS - 1)}😀 and more`;
    expect(bodyPreview(body)).toBe('a'.repeat(INLINE_BODY_CHARS - 1));
  });

  it("cuts the first bytes of a longer body (the app's answer) before a character it would split, never binary", () => {
    const text = Buffer.from('ab😀cd');
    for (let end = 2; end <= 5; end++)
      expect(encodeBodyHead(text.subarray(0, end))).toEqual({ body: 'ab', bodyEncoding: 'utf8' });
    expect(encodeBodyHead(text.subarray(0, 6))).toEqual({ body: 'ab😀', bodyEncoding: 'utf8' });
    expect(encodeBodyHead(text.subarray(0, 7))).toEqual({ body: 'ab😀c', bodyEncoding: 'utf8' });
    expect(encodeBodyHead(Buffer.from('é'))).toEqual({ body: 'é', bodyEncoding: 'utf8' });
    expect(encodeBodyHead(Buffer.from('é').subarray(0, 1))).toEqual({ body: '', bodyEncoding: 'utf8' });
    // Not text: every byte kept, as base64.
    const binary = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0xff, 0xe2]);
    expect(encodeBodyHead(binary)).toEqual({ body: binary.toString('base64'), bodyEncoding: 'base64' });
  });

  it('deletes the file when retention or a clear removes the capture, and files no capture names at open', async () => {
    const store = await CaptureStore.open({ path, maxCaptures: 2 });
    const body = Buffer.alloc(20_000, 'b');
    const [first, second, third] = [bigCapture('evt_1', body), bigCapture('evt_2', body), bigCapture('evt_3', body)];
    for (const c of [first, second, third]) await store.add(c);
    await expect.poll(() => readdir(bodiesDir())).toEqual([second.id, third.id].sort());
    await store.update(third.id, { pinned: true });
    expect(await store.clear()).toBe(1);
    expect(await readdir(bodiesDir())).toEqual([third.id]);
    await store.close();

    await writeFile(join(bodiesDir(), 'cap_left_by_a_crash'), 'x');
    const reopened = await CaptureStore.open({ path, maxCaptures: 2 });
    expect(await readdir(bodiesDir())).toEqual([third.id]);
    expect((await reopened.body(reopened.get(third.id) as Capture)).equals(body)).toBe(true);
    await reopened.close();
  });

  it('says which file is gone when a body cannot be read', async () => {
    const store = await CaptureStore.open({ path });
    const big = bigCapture('evt_gone', Buffer.alloc(20_000, 'g'));
    await store.add(big);
    await rm(join(bodiesDir(), big.id));
    await expect(store.body(store.get(big.id) as Capture)).rejects.toThrow(
      `The body of ${big.id} was kept in captures.json.bodies/${big.id}`,
    );
    await store.close();
  });

  it('keeps snapshots and compaction small however large the bodies (a 5 MiB body used to be in every snapshot)', async () => {
    const store = await CaptureStore.open({ path, compactAfterBytes: 64 * 1024 });
    const body = Buffer.alloc(1024 * 1024, 'm');
    for (let i = 0; i < 30; i++) await store.add(bigCapture(`evt_${i}`, body));
    await store.close();
    // Compactions ran (the journal outgrew 64 KiB), yet the snapshot holds 30 previews, not 30 MiB.
    expect((await stat(path)).size).toBeLessThan(30 * (INLINE_BODY_CHARS + 1024));
    const captures = await readCaptures(dir.path);
    expect(captures).toHaveLength(30);
    const reopened = await CaptureStore.open({ path });
    expect((await reopened.body(reopened.get(captures[29].id) as Capture)).equals(body)).toBe(true);
    await reopened.close();
  });
});
