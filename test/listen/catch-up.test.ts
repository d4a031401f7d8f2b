import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, type SpawnedCli, spawnCli } from '../helpers/cli.js';
import { portForRestarts } from '../helpers/ports.js';
import { type Receiver, startReceiver } from '../helpers/receiver.js';
import { tempDir } from '../helpers/sandbox.js';

// A sandbox runs on its own (clockhook sandbox, retries scaled to milliseconds); listen is stopped while
// events are triggered, so that the service tries, fails and gives up; then listen starts again.
describe('listen after downtime', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let app: Receiver;
  let sandbox: SpawnedCli;
  let port: number;
  const procs: SpawnedCli[] = [];
  const cli = (...args: string[]) => runCli(args, { cwd: dir.path });
  const listen = async (...args: string[]) => {
    const proc = spawnCli(
      [
        'listen',
        '--json',
        '--port',
        String(port),
        '--inspector-port',
        '0',
        '--no-open',
        '--forward-to',
        app.url,
        ...args,
      ],
      { cwd: dir.path },
    );
    procs.push(proc);
    await proc.waitForLine((line) => line.event === 'ready', 30_000);
    return proc;
  };
  /** Triggers events while listen is stopped, and waits until the service gave each up (5 failed attempts). */
  const missWhileStopped = async (count: number, endpoints = 1): Promise<string[]> => {
    const ids: string[] = [];
    for (let i = 0; i < count; i += 1)
      ids.push(JSON.parse((await cli('trigger', 'punch.created', '--json')).stdout).id);
    for (const id of ids) {
      await expect
        .poll(async () => JSON.parse((await cli('events', 'get', id, '--json')).stdout).delivery_attempts.length, {
          timeout: 20_000,
        })
        .toBe(5 * endpoints);
    }
    return ids;
  };

  beforeAll(async () => {
    dir = await tempDir();
    app = await startReceiver();
    port = await portForRestarts();
    sandbox = spawnCli(['sandbox', '--json', '--port', '0', '--time-scale', '0.0001'], { cwd: dir.path });
    await sandbox.waitForLine((line) => line.event === 'ready', 30_000);
    // A first run registers the endpoint, kept for the next run on this port.
    await (await listen()).stop();
  }, 60_000);
  afterAll(async () => {
    for (const proc of procs) await proc.stop();
    await sandbox?.stop();
    await app?.close();
    await dir?.remove();
  });

  it('says what it missed (a missed line each), and --catch-up redelivers the given-up ones to the app', async () => {
    const ids = await missWhileStopped(2);
    const told = await listen();
    for (const id of ids) {
      const line = await told.waitForLine((l) => l.event === 'missed' && l.eventId === id);
      expect(line).toMatchObject({ type: 'punch.created', outlook: { next: 'none', reason: 'gave-up' } });
    }
    expect(app.received.some((r) => ids.some((id) => r.body.includes(id)))).toBe(false);
    await told.stop();
    const caught = await listen('--catch-up', '--yes');
    for (const id of ids)
      await caught.waitForLine((l) => l.event === 'delivery' && l.eventId === id && l.status === 200);
    expect(ids.every((id) => app.received.some((r) => r.body.includes(id)))).toBe(true);
    await caught.stop();
  }, 120_000);

  it('asks before redelivering to other endpoints too, and re-enables a disabled endpoint first', async () => {
    const other = JSON.parse(
      (await cli('endpoints', 'create', '--url', 'http://127.0.0.1:9/elsewhere', '--json')).stdout,
    );
    const ids = await missWhileStopped(1, 2);
    const unasked = await listen('--catch-up');
    await unasked.waitForLine((l) => l.event === 'missed' && l.eventId === ids[0]);
    await expect.poll(() => unasked.stderr, { timeout: 15_000 }).toContain('each redelivery reaches 2 endpoints: #');
    expect(unasked.stderr).toMatch(
      /each redelivery reaches 2 endpoints: #\d+ this listen \(http:\/\/127\.0\.0\.1:\d+\/\)/,
    );
    expect(unasked.stderr).toContain(`, #${other.id} http://127.0.0.1:9/elsewhere.`);
    expect(unasked.stderr).toContain('Not redelivered: pass --yes to go on.');
    await unasked.stop();
    await cli('endpoints', 'delete', String(other.id));

    const ready = JSON.parse((await cli('endpoints', 'list', '--json')).stdout).data[0];
    await cli('endpoints', 'disable', String(ready.id));
    const enabled = await listen('--catch-up', '--yes');
    await expect.poll(() => enabled.stderr, { timeout: 15_000 }).toContain(`Re-enabled endpoint ${ready.id}`);
    await enabled.waitForLine((l) => l.event === 'delivery' && l.eventId === ids[0] && l.status === 200);
    await enabled.stop();
  }, 120_000);

  it('events redeliver --missed does it from another terminal while listen runs', async () => {
    const ids = await missWhileStopped(1);
    const running = await listen();
    await running.waitForLine((l) => l.event === 'missed' && l.eventId === ids[0]);
    const res = await cli('events', 'redeliver', '--missed', '--yes');
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toContain(`Redelivered ${ids[0]} to 1 endpoint.`);
    await running.waitForLine((l) => l.event === 'delivery' && l.eventId === ids[0] && l.status === 200);
    expect((await cli('events', 'redeliver')).stderr).toContain('or --missed');
    await running.stop();
  }, 120_000);
});

describe('findMissed', () => {
  it('leaves out an event made since listen started: its first attempt may be on its way', async () => {
    const { ApiClient } = await import('../../src/api/index.js');
    const { findMissed } = await import('../../src/listen/index.js');
    const { startTestSandbox } = await import('../helpers/sandbox.js');
    const sandbox = await startTestSandbox();
    try {
      const client = new ApiClient({ baseUrl: sandbox.sandbox.apiBase, apiKey: sandbox.sandbox.apiKey });
      const endpoint = await client.createEndpoint({ url: 'http://127.0.0.1:9/nowhere', enabledEvents: ['*'] });
      const before = Date.now() - 2000;
      const event = await client.request<{ id: string }>('POST', '/sandbox/events', {
        body: { type: 'punch.created' },
      });
      const since = (startedAt: number) => findMissed({ client, endpoint, captured: new Set(), startedAt });
      // Listen started before the event: it came while listen ran.
      expect(await since(before)).toEqual([]);
      // Listen started after it: missed while listen was off.
      expect((await since(Date.now() + 1000)).map((m) => m.eventId)).toEqual([event.id]);
      expect(
        await findMissed({ client, endpoint, captured: new Set([event.id]), startedAt: Date.now() + 1000 }),
      ).toEqual([]);
    } finally {
      await sandbox.close();
    }
  });
});
