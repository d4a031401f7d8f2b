import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Capture, CaptureStore, newCaptureId } from '../../src/store/index.js';
import { startRelayServer } from '../../src/relay/index.js';
import { runCli, spawnCli } from '../helpers/cli.js';
import { postSigned, readCaptures, startListenProcess } from '../helpers/listen.js';
import { recordingLogger } from '../helpers/logger.js';
import { type Receiver, startReceiver } from '../helpers/receiver.js';
import { tempDir } from '../helpers/sandbox.js';
import { canMount, fill, mountTiny, unfill, unmount } from '../helpers/tmpfs.js';
import { SECRET } from '../helpers/delivery.js';

const envelope = (id: string, pad = 6000) =>
  JSON.stringify({
    id,
    object: 'event',
    type: 'punch.created',
    api_version: '2026-11-01',
    created: 1_790_000_000,
    // More than a page (4 KiB) of journal per capture: see disk.test.ts.
    data: { pad: 'p'.repeat(pad) },
  });

let app: Receiver;
let listen: Awaited<ReturnType<typeof startListenProcess>> | undefined;
const mounts: string[] = [];

beforeAll(async () => {
  app = await startReceiver();
});
afterEach(async () => {
  await listen?.stop('SIGKILL');
  listen = undefined;
  app.received.length = 0;
  for (const mount of mounts.splice(0)) unmount(mount);
});
afterAll(() => app.close());

function mounted(size?: string): string {
  const mount = mountTiny(size) as string;
  mounts.push(mount);
  return mount;
}

/** Sends `ids` as signed deliveries, `concurrency` at a time; `during(i)` runs as the i-th one starts. */
async function burst(url: string, ids: string[], concurrency: number, during: (i: number) => void) {
  const status = new Map<string, number>();
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < ids.length) {
        const i = next++;
        during(i);
        status.set(ids[i], (await postSigned(url, envelope(ids[i]), SECRET)).status);
      }
    }),
  );
  return status;
}

const idsAtApp = () => app.received.map((r) => JSON.parse(r.body.toString()).id as string);
const ids = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `evt_${prefix}_${i}`);

/** What every surface must agree on: acknowledged means stored as taken; refused means never forwarded, never stored as taken. */
function expectOnePromise(status: Map<string, number>, stored: Capture[]) {
  const byEvent = new Map(stored.map((c) => [c.envelope?.id, c]));
  const acked = [...status].filter(([, s]) => s === 200).map(([id]) => id);
  const refused = [...status].filter(([, s]) => s === 503).map(([id]) => id);
  expect(acked.length + refused.length).toBe(status.size);
  for (const id of acked) expect(byEvent.has(id) ? byEvent.get(id)?.rejected : 'missing', id).toBeNull();
  for (const id of refused) {
    expect(idsAtApp(), id).not.toContain(id);
    const kept = byEvent.get(id);
    if (kept) expect(kept.rejected, id).toEqual({ statusCode: 503, code: 'capture_failed' });
  }
  // The app got each acknowledged delivery once, and nothing else of the burst.
  expect(
    idsAtApp()
      .filter((id) => status.has(id))
      .sort(),
  ).toEqual([...acked].sort());
  return { acked, refused };
}

describe.skipIf(!canMount)('the store on a disk that fills up', () => {
  it('mid-burst: acknowledges only what it stored, forwards nothing it refused, and recovers once space frees', async () => {
    const mount = mounted();
    listen = await startListenProcess(['--secret', SECRET, '--forward-to', app.url, '--no-inspector'], mount);
    const status = await burst(listen.ready.listener, ids('burst', 60), 4, (i) => {
      if (i === 20) fill(mount);
    });
    const acked = [...status].filter(([, s]) => s === 200).map(([id]) => id);
    const refused = [...status].filter(([, s]) => s === 503).map(([id]) => id);
    expect(acked.length).toBeGreaterThanOrEqual(16);
    expect(refused.length).toBeGreaterThan(0);
    // Space again: the next delivery is taken with no hand work, and the refused ones are written as refused.
    unfill(mount);
    expect((await postSigned(listen.ready.listener, envelope('evt_after'), SECRET)).status).toBe(200);
    // The forward results are written lazily: wait for the last one on the disk.
    await expect
      .poll(async () => (await readCaptures(mount)).find((c) => c.envelope?.id === 'evt_after')?.forward)
      .toBeDefined();
    await listen.stop('SIGKILL');
    listen = undefined;
    const stored = await readCaptures(mount);
    expectOnePromise(status, stored);
    expect(stored.map((c) => c.envelope?.id)).toEqual(expect.arrayContaining([...acked, 'evt_after']));
    expect(stored.filter((c) => !c.rejected).every((c) => c.forward?.statusCode === 200)).toBe(true);
  });

  it('keeps deliveries flowing when a fold of the journal does not fit but appends still do', async () => {
    const mount = mounted();
    const path = join(mount, '.clockhook', 'captures.json');
    const logger = recordingLogger();
    const clock = { now: Date.now() };
    const store = await CaptureStore.open({ path, logger, now: () => clock.now, compactAfterBytes: 256 * 1024 });
    const capture = (id: string): Capture => {
      const body = envelope(id, 10_000);
      return {
        ...{ id: newCaptureId(), receivedAt: new Date().toISOString(), source: 'delivery', method: 'POST', path: '/' },
        ...{ headers: {}, body, bodyEncoding: 'utf8', bodySize: body.length, signature: { status: 'unchecked' } },
        ...{ envelope: null, contractProblems: [], duplicateOf: null, rejected: null },
      };
    };
    for (let i = 0; i < 20; i++) await store.add(capture(`before_${i}`));
    fill(mount);
    unfill(mount, 4); // 256 KiB: room for a dozen captures, not for a snapshot of the store
    // The journal outgrows the store on the way, and a fold starts: its snapshot does not fit.
    for (let i = 0; i < 12; i++) await expect(store.add(capture(`tight_${i}`))).resolves.toBeUndefined();
    await expect
      .poll(() => logger.warnings.join('\n'))
      .toMatch(/Could not rewrite the capture store .*ENOSPC.*deliveries go on/);
    for (let i = 0; i < 4; i++) await expect(store.add(capture(`after_fold_${i}`))).resolves.toBeUndefined();
    expect(logger.warnings).toHaveLength(1);
    unfill(mount);
    clock.now += 30_000;
    await store.add(capture('after'));
    await expect.poll(() => logger.infos.join('\n')).toMatch(/rewritten again/);
    await store.close();
    expect(await readCaptures(mount)).toHaveLength(37);
  });

  it('never lets a refused large body break captures show or export', async () => {
    const mount = mounted();
    listen = await startListenProcess(['--secret', SECRET, '--forward-to', app.url, '--no-inspector'], mount);
    const big = envelope('evt_big', 3 * 1024 * 1024);
    expect((await postSigned(listen.ready.listener, big, SECRET)).status).toBe(503);
    expect((await postSigned(listen.ready.listener, envelope('evt_small'), SECRET)).status).toBe(200);
    const bigOne = async () => (await readCaptures(mount)).find((c) => c.envelope?.id === 'evt_big');
    await expect.poll(async () => (await bigOne())?.rejected).toBeTruthy();
    const refused = (await bigOne()) as Capture;
    expect(refused.rejected).toEqual({ statusCode: 503, code: 'capture_failed' });
    const show = await runCli(['captures', 'show', refused.id], { cwd: mount });
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toMatch(/body missing.*gone/);
    for (const format of ['ndjson', 'har', 'curl']) {
      const res = await runCli(['captures', 'export', '--format', format], { cwd: mount });
      expect(res.code, res.stderr).toBe(0);
      expect(res.stderr).toMatch(/body file of 1 capture is gone/);
      expect(res.stdout).toContain('evt_small');
      expect(res.stderr).not.toContain('    at ');
    }
    const ndjson = (await runCli(['captures', 'export', '--format', 'ndjson'], { cwd: mount })).stdout;
    expect(ndjson.split('\n').filter((l) => l.includes('bodyMissing'))).toHaveLength(1);
  });

  it('says a full disk at start in one line, leaves no lock or empty .gitignore, and starts once there is room', async () => {
    const mount = mounted();
    fill(mount);
    const args = ['listen', '--port', '0', '--sandbox-port', '0', '--secret', SECRET, '--no-inspector'];
    for (const extra of [[], ['--db', join(mount, 'store.json')]]) {
      const failed = await runCli([...args, ...extra], { cwd: mount });
      expect(failed.code).toBe(1);
      // One line, whole: the file, that the disk is full, the room it needs and what to do; no class name.
      expect(failed.stderr.trim().split('\n')).toHaveLength(1);
      expect(failed.stderr).toMatch(/the disk is full.*needs a few MB free there: free some space/);
      expect(failed.stderr).toMatch(extra.length > 0 ? /store\.json/ : /\.clockhook\//); // which file
      expect(failed.stderr).not.toMatch(/Error\b| {4}at /);
    }
    expect(existsSync(join(mount, 'store.json.lock'))).toBe(false);
    unfill(mount);
    for (const extra of [[], ['--db', join(mount, 'store.json')]]) {
      listen = await startListenProcess(['--secret', SECRET, '--no-inspector', ...extra], mount);
      expect((await postSigned(listen.ready.listener, envelope('evt_room'), SECRET)).status).toBe(200);
      await listen.stop('SIGINT');
      listen = undefined;
    }
    expect(readFileSync(join(mount, '.clockhook', '.gitignore'), 'utf8')).toMatch(/^\*$/m);
  });
});

describe.skipIf(!canMount)('a restart on a nearly full disk', () => {
  it('needs room for what it writes, not for a copy of the store', async () => {
    const mount = mounted();
    listen = await startListenProcess(['--secret', SECRET, '--no-inspector'], mount);
    for (let i = 0; i < 40; i++)
      expect((await postSigned(listen.ready.listener, envelope(`evt_kept_${i}`), SECRET)).status).toBe(200);
    await listen.stop('SIGKILL'); // the store is a 250 KB journal to fold in at the next start
    fill(mount);
    unfill(mount, 2); // 128 KiB: not enough for the snapshot of it
    listen = await startListenProcess(['--secret', SECRET, '--no-inspector'], mount);
    expect((await postSigned(listen.ready.listener, envelope('evt_restarted'), SECRET)).status).toBe(200);
    expect(listen.stderr).toMatch(/Could not rewrite the capture store .*deliveries go on/);
    await listen.stop('SIGKILL');
    expect(await readCaptures(mount)).toHaveLength(41);
  });
});

describe.skipIf(!canMount)('a stop on a full disk', () => {
  it('says so in one line, without a stack trace, and the next start has every acknowledged delivery', async () => {
    const mount = mounted();
    listen = await startListenProcess(['--secret', SECRET, '--forward-to', app.url, '--no-inspector'], mount);
    expect((await postSigned(listen.ready.listener, envelope('evt_kept'), SECRET)).status).toBe(200);
    fill(mount);
    const stopping = listen;
    listen = undefined;
    await stopping.stop('SIGINT');
    const said = `${stopping.stderr}${JSON.stringify(stopping.lines)}`;
    expect(said).toMatch(/disk holding .*captures\.json is full: the store is left as its journal/);
    // Said once, whole (the room the next start needs too), never as an error's class name or stack.
    const full = stopping.stderr.split('\n').filter((line) => /full/.test(line));
    expect(full).toHaveLength(1);
    expect(full[0]).toMatch(/needs (a few|about \d+) MB free/);
    expect(stopping.stderr).not.toMatch(/Error\b| {4}at /);
    expect(stopping.stderr).not.toMatch(/^clockhook: .*ENOSPC[^\n]*$/m);
    unfill(mount);
    listen = await startListenProcess(['--secret', SECRET, '--no-inspector'], mount);
    expect((await readCaptures(mount)).map((c) => c.envelope?.id)).toContain('evt_kept');
  });
});

describe('the store folder deleted under a running listen', () => {
  it('is made again within seconds, with its lock, and nothing acknowledged is lost to a kill -9', async () => {
    const dir = await tempDir();
    const state = join(dir.path, '.clockhook');
    listen = await startListenProcess(['--secret', SECRET, '--forward-to', app.url, '--no-inspector'], dir.path);
    const status = await burst(listen.ready.listener, ids('gone', 40), 4, (i) => {
      // As a shell's `rm -rf` does it: a file listen writes meanwhile may stay (rm then says so).
      if (i === 15) spawnSync('rm', ['-rf', state]);
    });
    // At once, not after the next look at the folder: nothing was acknowledged from the deleted journal.
    expect(readFileSync(join(state, 'captures.json.lock'), 'utf8')).toBe(String(listen.child.pid));
    expect(readFileSync(join(state, '.gitignore'), 'utf8')).toMatch(/^\*$/m);
    await expect.poll(() => existsSync(join(state, 'listen.json'))).toBe(true);
    await listen.stop('SIGKILL');
    expect(listen.stderr).toMatch(/was deleted while listen runs.*made it again/);
    listen = undefined;
    const stored = await readCaptures(dir.path);
    const { acked } = expectOnePromise(status, stored);
    expect(acked.length).toBeGreaterThanOrEqual(30);
    // A second listen cannot take the folder from the first while it ran, and starts now that it is gone.
    listen = await startListenProcess(['--secret', SECRET, '--no-inspector'], dir.path);
    expect((await readCaptures(dir.path)).map((c) => c.envelope?.id)).toEqual(expect.arrayContaining(acked));
  });

  // With the store in the folder, its guard makes the folder again; with --db elsewhere, the keeper does. Either
  // way every file comes back through the folder's one keeper: the sandbox's, the relay's, the page's token.
  it.each([[[]], [['--db', 'captures.json']]])(
    'writes back what listen keeps beside the store (%j), so that the other commands find its sandbox again',
    async (db: string[]) => {
      const dir = await tempDir();
      const state = join(dir.path, '.clockhook');
      const relay = await startRelayServer({ port: 0, host: '127.0.0.1' });
      try {
        listen = await startListenProcess(['--forward-to', app.url, '--relay', relay.url, ...db], dir.path);
        // Gone at once (renamed away, then deleted): an rm -rf walking the folder on a busy machine races the
        // keeper writing it back, and a file it had listed goes a second time.
        spawnSync('mv', [state, `${state}.gone`]);
        spawnSync('rm', ['-rf', `${state}.gone`]);
        const kept = [
          ...['sandbox.json', 'sandbox-db.json', 'sandbox-db.json.lock', 'endpoints.json', 'listen.json'],
          ...['relay.json', 'inspector-token'],
        ];
        await expect.poll(() => kept.filter((name) => !existsSync(join(state, name))), { timeout: 10_000 }).toEqual([]);
        // Said once, in one line: everything the session keeps, by the keeper of the folder.
        // (the line may come a moment after the files, on a busy machine)
        const saidNow = () =>
          listen!.stderr.split('\n').filter((line) => line.startsWith('Wrote back what clockhook keeps in'));
        await expect.poll(() => saidNow().length).toBeGreaterThan(0);
        const said = saidNow();
        expect(said).toHaveLength(1);
        for (const what of ['endpoints.json', 'sandbox-db.json (with its lock)', 'relay.json', 'inspector-token'])
          expect(said[0]).toContain(what);
        const trigger = await runCli(['trigger', 'punch.created', '--json'], { cwd: dir.path });
        expect(trigger.code, trigger.stderr).toBe(0);
        const { id } = JSON.parse(trigger.stdout) as { id: string };
        await listen.waitForLine((line) => line.event === 'delivery' && line.eventId === id);
        expect((await runCli(['secret'], { cwd: dir.path })).code).toBe(0);
        // One of them deleted alone is back within seconds.
        spawnSync('rm', [join(state, 'sandbox.json')]);
        await expect.poll(() => existsSync(join(state, 'sandbox.json')), { timeout: 10_000 }).toBe(true);
      } finally {
        await listen?.stop();
        listen = undefined;
        await relay.close();
      }
    },
    60_000,
  );

  it('is written back by a clockhook sandbox of its own, whose commands find it again', async () => {
    const dir = await tempDir();
    const sandbox = spawnCli(['sandbox', '--json', '--port', '0'], { cwd: dir.path });
    try {
      await sandbox.waitForLine((line) => line.event === 'ready', 30_000);
      spawnSync('rm', ['-rf', join(dir.path, '.clockhook')]);
      const kept = ['sandbox.json', 'sandbox-db.json', 'sandbox-db.json.lock'];
      const state = join(dir.path, '.clockhook');
      await expect.poll(() => kept.filter((name) => !existsSync(join(state, name))), { timeout: 10_000 }).toEqual([]);
      const trigger = await runCli(['trigger', 'punch.created', '--json'], { cwd: dir.path });
      expect(trigger.code, trigger.stderr).toBe(0);
      expect(sandbox.stderr).toMatch(
        /Wrote back what clockhook keeps in .*: the sandbox's sandbox-db\.json \(with its lock\) and sandbox\.json\./,
      );
    } finally {
      await sandbox.stop();
    }
  }, 60_000);
});
