import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CaptureStore } from '../../src/store/index.js';
import { afterAll, describe, expect, it } from 'vitest';
import { postSigned, readCaptures, startListenProcess } from '../helpers/listen.js';
import { startReceiver } from '../helpers/receiver.js';
import { tempDir } from '../helpers/sandbox.js';
import { SECRET, envelopeBody } from '../helpers/delivery.js';

const cleanups: (() => unknown)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

describe('a crash in the middle of a burst', () => {
  it('kill -9 during 2,000 deliveries: every delivery answered 2xx is stored, and the store parses', async () => {
    const dir = await tempDir();
    cleanups.push(dir.remove);
    const app = await startReceiver();
    cleanups.push(app.close);
    const listen = await startListenProcess(
      ['--secret', SECRET, '--forward-to', app.url, '--max-captures', '5000'],
      dir.path,
    );
    cleanups.push(() => listen.stop('SIGKILL'));

    const ids = Array.from({ length: 2000 }, (_, i) => `evt_burst_${i}`);
    const answered: string[] = [];
    const bodies = new Map<string, string>();
    let next = 0;
    let killed = false;
    const worker = async () => {
      while (next < ids.length) {
        const id = ids[next++];
        // Every tenth body is over 16 KiB, so kept in a file of its own.
        const body = envelopeBody(id, { data: { i: next, pad: next % 10 === 0 ? 'p'.repeat(40_000) : '' } });
        bodies.set(id, body);
        try {
          const res = await postSigned(listen.ready.listener, body, SECRET);
          if (res.status >= 200 && res.status < 300) answered.push(id);
        } catch {
          return; // the listener is gone
        }
        if (!killed && answered.length >= 1000) {
          killed = true;
          listen.child.kill('SIGKILL');
        }
      }
    };
    await Promise.all(Array.from({ length: 16 }, worker));
    await listen.exited;
    expect(killed).toBe(true);
    expect(answered.length).toBeGreaterThanOrEqual(1000);

    // The snapshot is never half-written: it parses as it is on disk.
    const snapshot = JSON.parse(await readFile(join(dir.path, '.clockhook', 'captures.json'), 'utf8'));
    expect(snapshot.version).toBe(1);
    const captures = await readCaptures(dir.path);
    const stored = new Set(captures.map((c) => c.envelope?.id));
    expect(answered.filter((id) => !stored.has(id))).toEqual([]);
    // A large body answered 2xx is whole in its file.
    const apart = captures.filter((c) => c.bodyFile && answered.includes(c.envelope?.id as string));
    expect(apart.length).toBeGreaterThanOrEqual(90);
    for (const capture of apart)
      expect(await readFile(join(dir.path, '.clockhook', capture.bodyFile as string), 'utf8')).toBe(
        bodies.get(capture.envelope?.id as string),
      );

    const again = await startListenProcess(['--secret', SECRET], dir.path);
    cleanups.push(() => again.stop('SIGKILL'));
    expect(again.ready.event).toBe('ready');
  }, 60_000);

  it('kill -9 while the journal is being folded into a snapshot, three times over: every capture acknowledged is kept, once, in order', async () => {
    const dir = await tempDir();
    cleanups.push(dir.remove);
    const path = join(dir.path, '.clockhook', 'captures.json');
    // The store in a child (from dist/): 8 writers, each printing an id once its capture is durable.
    // A small journal threshold makes it fold every few hundred captures; every 10th body is kept apart.
    const script = `
      const { CaptureStore, newCaptureId } = await import(${JSON.stringify(pathToFileURL(join(process.cwd(), 'dist/store/index.js')).href)});
      const store = await CaptureStore.open({ path: ${JSON.stringify(path)}, maxCaptures: 300, compactAfterBytes: 64 * 1024 });
      let n = 0;
      const writer = async () => {
        for (;;) {
          const i = n++;
          const body = JSON.stringify({ i, pad: (i % 10 === 0 ? 'L' : 's').repeat(i % 10 === 0 ? 20000 : 900) });
          const id = newCaptureId();
          await store.insert({ id, receivedAt: '', source: 'delivery', method: 'POST', path: '/', headers: {}, body, bodyEncoding: 'utf8',
            bodySize: body.length, signature: { status: 'unchecked' }, envelope: null, contractProblems: [], duplicateOf: null, rejected: null }).durable;
          process.stdout.write(id + '\\n');
        }
      };
      await Promise.all(Array.from({ length: 8 }, writer));`;
    const acknowledged = new Set<string>();
    for (let round = 0; round < 3; round++) {
      const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let buffer = '';
      child.stdout.on('data', (chunk: Buffer) => {
        buffer += chunk;
        const lines = buffer.split('\n');
        buffer = lines.pop() as string;
        for (const id of lines) acknowledged.add(id);
      });
      const exited = new Promise((resolve) => child.once('exit', resolve));
      // Killed while a fold is under way (its journal renamed, its snapshot being written or just in
      // place), at a different moment of it each round.
      await new Promise<void>((resolve, reject) => {
        const started = Date.now();
        const poll = setInterval(() => {
          if (Date.now() - started > 20_000) {
            clearInterval(poll);
            child.kill('SIGKILL');
            reject(new Error('no fold within 20 s'));
          } else if (acknowledged.size > 200 * (round + 1) && existsSync(`${path}.journal.folding`)) {
            clearInterval(poll);
            setTimeout(() => {
              child.kill('SIGKILL');
              resolve();
            }, round);
          }
        }, 1);
      });
      await exited;

      const store = await CaptureStore.open({ path, maxCaptures: 300 });
      const ids = store.all().map((c) => c.id);
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids).toEqual([...ids].sort());
      expect(ids.length).toBeLessThanOrEqual(300);
      // Every acknowledged capture is there, unless retention (the newest 300) let it go.
      const kept = new Set(ids);
      const missing = [...acknowledged].filter((id) => !kept.has(id) && (ids.length < 300 || id > ids[0]));
      expect(missing).toEqual([]);
      if (acknowledged.size >= 300) expect(ids).toHaveLength(300);
      for (const capture of store.all().filter((c) => c.bodyFile)) {
        expect(JSON.parse((await store.body(capture)).toString()).pad).toHaveLength(20_000);
      }
      await store.close();
    }
  }, 90_000);
});
