import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { postSigned, readCaptures, startListenProcess } from '../helpers/listen.js';
import { startReceiver } from '../helpers/receiver.js';
import { tempDir } from '../helpers/sandbox.js';

const SECRET = 'whsec_crash';
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
    const listen = await startListenProcess(['--secret', SECRET, '--forward-to', app.url, '--max-captures', '5000'], dir.path);
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
        const body = JSON.stringify({ id, object: 'event', type: 'punch.created', api_version: '2026-11-01', created: 1_790_000_000, data: { i: next, pad: next % 10 === 0 ? 'p'.repeat(40_000) : '' } });
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
    for (const capture of apart) expect(await readFile(join(dir.path, '.clockhook', capture.bodyFile as string), 'utf8')).toBe(bodies.get(capture.envelope?.id as string));

    const again = await startListenProcess(['--secret', SECRET], dir.path);
    cleanups.push(() => again.stop('SIGKILL'));
    expect(again.ready.event).toBe('ready');
  }, 60_000);
});
