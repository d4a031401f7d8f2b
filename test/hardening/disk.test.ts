import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { postSigned, readCaptures, startListenProcess } from '../helpers/listen.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { type Capture, CaptureStore, newCaptureId } from '../../src/store/index.js';
import { JournalAdapter } from '../../src/store/journal.js';
import { silentLogger } from '../../src/logger.js';
import { canMount, fill, mountTiny, unmount } from '../helpers/tmpfs.js';
import { SECRET, envelopeBody } from '../helpers/delivery.js';

let mount: string;
let app: Receiver;
let listen: Awaited<ReturnType<typeof startListenProcess>> | undefined;

beforeEach(async () => {
  if (!canMount) return;
  mount = mountTiny() as string;
  app = await startReceiver();
});
afterEach(async () => {
  if (!canMount) return;
  await listen?.stop('SIGKILL');
  listen = undefined;
  await app.close();
  unmount(mount);
});

const envelope = (id: string) =>
  JSON.stringify({
    id,
    object: 'event',
    type: 'punch.created',
    api_version: '2026-11-01',
    created: 1_790_000_000,
    // More than a page (4 KiB) of journal per capture: on a full disk, the last page of the journal may
    // still have that much room, and a smaller capture would be written there after all.
    data: { pad: 'p'.repeat(6000) },
  });
const send = (id: string) => postSigned(listen?.ready.listener as string, envelope(id), SECRET);

describe.skipIf(!canMount)('a full or read-only disk', () => {
  it('answers 503 with a clear log line while the disk is full, and recovers when space returns', async () => {
    listen = await startListenProcess(['--secret', SECRET, '--forward-to', app.url, '--no-inspector'], mount);
    expect((await send('evt_before')).status).toBe(200);
    fill(mount);
    const full = await send('evt_full');
    expect(full.status).toBe(503);
    expect(JSON.parse(full.text).error.code).toBe('capture_failed');
    expect(app.received.map((r) => JSON.parse(r.body.toString()).id)).toEqual(['evt_before']); // not forwarded
    await expect
      .poll(() => listen?.stderr)
      .toMatch(/Could not write the capture to \.clockhook\/captures\.json: ENOSPC.*503/);
    execFileSync('sh', ['-c', `rm -f ${mount}/filler-*`]);
    expect((await send('evt_after')).status).toBe(200);
    // Killed, not stopped: the journal must be whole as it is, with no torn write from the full disk.
    await listen.stop('SIGKILL');
    const ids = (await readCaptures(mount)).map((c) => c.envelope?.id);
    expect(ids).toEqual(expect.arrayContaining(['evt_before', 'evt_after']));
  });

  it('answers 503 to a body larger than the free space, leaving no half of it, and goes on storing the next', async () => {
    listen = await startListenProcess(['--secret', SECRET, '--forward-to', app.url, '--no-inspector'], mount);
    const big = envelopeBody('evt_big', { data: { pad: 'p'.repeat(3 * 1024 * 1024) } });
    const res = await postSigned(listen.ready.listener, big, SECRET);
    expect(res.status).toBe(503);
    expect(JSON.parse(res.text).error.code).toBe('capture_failed');
    await expect
      .poll(() => listen?.stderr)
      .toMatch(/Could not write the capture to \.clockhook\/captures\.json: ENOSPC.*503/);
    expect(app.received).toHaveLength(0);
    expect(readdirSync(join(mount, '.clockhook', 'captures.json.bodies'))).toEqual([]);
    // The body was given up, not retried in front of every later delivery.
    expect((await send('evt_small')).status).toBe(200);
    expect(app.received.map((r) => JSON.parse(r.body.toString()).id)).toEqual(['evt_small']);
  });

  it('keeps the body file of a capture retention dropped until what replaced it is on the disk', async () => {
    const path = join(mount, '.clockhook', 'captures.json');
    const store = await CaptureStore.open({ path, maxCaptures: 1 });
    const capture = (body: string): Capture => ({
      id: newCaptureId(),
      receivedAt: '',
      source: 'delivery',
      method: 'POST',
      path: '/',
      headers: {},
      body,
      bodyEncoding: 'utf8',
      bodySize: body.length,
      signature: { status: 'unchecked' },
      envelope: null,
      contractProblems: [],
      duplicateOf: null,
      rejected: null,
    });
    await store.add(capture('L'.repeat(40_000)));
    const [large] = store.all();
    fill(mount);
    // Pushes the large capture out of the store in memory, but cannot be written.
    await expect(store.insert(capture('s'.repeat(12_000))).durable).rejects.toThrow(/ENOSPC/);
    await new Promise((resolve) => setTimeout(resolve, 50)); // time for a deletion to have happened
    // As after a crash now: the store on the disk still has the large capture, and so its body.
    expect((await readCaptures(mount)).map((c) => c.id)).toEqual([large.id]);
    expect(existsSync(join(mount, '.clockhook', large.bodyFile as string))).toBe(true);
    execFileSync('sh', ['-c', `rm -f ${mount}/filler-*`]);
    await store.close();
  });

  it('after a failed write, closes the journal only once what was written before it is fsynced', async () => {
    const path = join(mount, 'captures.json');
    const journal = new JournalAdapter(path, { logger: silentLogger, compactAfterBytes: 1 << 30, now: Date.now });
    const capture = (body: string) => ({ id: newCaptureId(), body }) as Capture;
    const openJournals = () =>
      readdirSync('/proc/self/fd').filter((fd) => {
        try {
          return readlinkSync(`/proc/self/fd/${fd}`) === journal.journalPath;
        } catch {
          return false; // closed meanwhile (readdir's own fd)
        }
      }).length;

    journal.put(capture('a'));
    journal.append(); // written; its delivery waits for the next fsync
    fill(mount);
    journal.put(capture('b'.repeat(12_000)));
    expect(() => journal.append()).toThrow(/ENOSPC/);
    expect(openJournals()).toBe(1); // closing it now would let that fsync be skipped
    await journal.sync();
    expect(openJournals()).toBe(0); // then closed, so that the disk can be remounted

    // A write that fails while an fsync runs on the fd: closed only when the fsync is done.
    execFileSync('sh', ['-c', `rm -f ${mount}/filler-*`]);
    journal.put(capture('c'));
    journal.append();
    const syncing = journal.sync();
    fill(mount);
    journal.put(capture('d'.repeat(12_000)));
    expect(() => journal.append()).toThrow(/ENOSPC/);
    expect(openJournals()).toBe(1);
    await syncing;
    expect(openJournals()).toBe(0);
    execFileSync('sh', ['-c', `rm -f ${mount}/filler-*`]);
    journal.close();
  });

  it('answers 503 while the store turns read-only, and recovers when it is writable again', async () => {
    listen = await startListenProcess(['--secret', SECRET, '--forward-to', app.url, '--no-inspector'], mount);
    expect((await send('evt_rw')).status).toBe(200);
    fill(mount); // the failed write closes the journal, so the file system can be remounted
    expect((await send('evt_full')).status).toBe(503);
    execFileSync('mount', ['-o', 'remount,ro', mount]);
    const ro = await send('evt_ro');
    expect(ro.status).toBe(503);
    await expect.poll(() => listen?.stderr).toMatch(/EROFS/);
    execFileSync('mount', ['-o', 'remount,rw', mount]);
    execFileSync('sh', ['-c', `rm -f ${mount}/filler-*`]);
    expect((await send('evt_rw_again')).status).toBe(200);
  });

  it('refuses to start on a read-only folder, saying where and what to do', async () => {
    execFileSync('mount', ['-o', 'remount,ro', mount]);
    const { runCli } = await import('../helpers/cli.js');
    const res = await runCli(['listen', '--port', '0', '--secret', SECRET, '--no-inspector'], { cwd: mount });
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/cannot write .*\.clockhook.*read-only.*--db/s);
    expect(res.stderr).not.toContain('    at ');
  });
});
