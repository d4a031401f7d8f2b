import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/api/index.js';
import { deliveryJson, deliveryLine } from '../../src/cli/delivery-line.js';
import { type DeliveryReport, parseFaults } from '../../src/listener/index.js';
import { type ListenSession, startListen } from '../../src/listen/index.js';
import { postSigned } from '../helpers/listen.js';
import { portForRestarts } from '../helpers/ports.js';
import { type Receiver, startReceiver } from '../helpers/receiver.js';
import { startTestSandbox, type TestSandbox, tempDir } from '../helpers/sandbox.js';
import { SECRET, envelopeBody } from '../helpers/delivery.js';

// One sandbox for the file, as the service: retries after 0.3 s, 1.5 s… (time scale 0.005), and a receiver's
// time limit of 1.5 s instead of 30, so that an injected timeout is over quickly.
let sandbox: TestSandbox;
let client: ApiClient;
let app: Receiver;
let session: ListenSession | undefined;
let reports: DeliveryReport[] = [];
const cleanups: (() => Promise<void>)[] = [];

beforeAll(async () => {
  sandbox = await startTestSandbox({ timeScale: 0.005, deliveryTimeoutMs: 1_500 });
  client = new ApiClient({ baseUrl: sandbox.sandbox.apiBase, apiKey: sandbox.sandbox.apiKey });
  app = await startReceiver();
});
afterEach(async () => {
  await session?.close();
  session = undefined;
  reports = [];
  app.received.length = 0;
  for (const cleanup of cleanups.splice(0)) await cleanup();
});
afterAll(async () => {
  await app?.close();
  await sandbox?.close();
});

/** listen with these faults, through the file's sandbox (as the real API: an endpoint of its own) or none. */
async function listenWith(faults: string, { seed = 1, api = true } = {}) {
  const dir = await tempDir();
  cleanups.push(dir.remove);
  // Through the API, the endpoint registered is listen's public URL: here, its own address.
  const port = await portForRestarts();
  session = await startListen({
    forwardTo: app.url,
    port,
    inspector: false,
    stateDir: join(dir.path, '.clockhook'),
    faults: { spec: parseFaults(faults), seed },
    onDelivery: (report) => reports.push(report),
    ...(api
      ? { apiKey: sandbox.sandbox.apiKey, apiBase: sandbox.sandbox.apiBase, publicUrl: `http://127.0.0.1:${port}/` }
      : { secret: SECRET }),
  });
  return session;
}

const idsAtApp = () => app.received.map((r) => JSON.parse(r.body.toString()).id as string);
const emit = (type = 'punch.created') =>
  client.request<{ id: string }>('POST', '/sandbox/events', { body: { type } }).then((e) => e.id);
const attemptsOf = (eventId: string) => sandbox.attempts.filter((a) => a.eventId === eventId);

describe('listen --faults', () => {
  it('duplicate: the app gets the same event id twice, freshly signed, and every surface says so', async () => {
    const listen = await listenWith('duplicate=100%');
    const id = await emit();
    await expect.poll(idsAtApp).toEqual([id, id]);
    const [first, second] = app.received;
    expect(second.body.equals(first.body)).toBe(true);
    expect(second.headers['x-service-signature']).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    await expect.poll(() => listen.store.ofEvent(id).map((c) => c.injected)).toEqual([['duplicated'], ['duplicate']]);
    const copy = listen.store.ofEvent(id)[1];
    expect(copy).toMatchObject({ source: 'delivery', kind: 'duplicate', signature: { status: 'valid' } });
    // The service made one attempt: the second delivery is clockhook's own.
    await expect.poll(() => attemptsOf(id).length).toBe(1);
    await expect.poll(() => reports.length).toBe(2);
    const report = reports.find((r) => r.captureId === copy.id) as DeliveryReport;
    expect(deliveryLine(report)).toContain('injected: duplicate');
    expect(deliveryJson(report)).toMatchObject({ injected: ['duplicate'], story: { kind: 'duplicate' } });
    expect(listen.listener.injector?.summary()).toMatch(
      /^Faults injected: 1 duplicate \(--faults-seed 1 repeats them\)\.$/,
    );
  });

  it('reorder: deliveries held together reach the app in another order than they came', async () => {
    const listen = await listenWith('reorder=400', { api: false });
    const ids = Array.from({ length: 5 }, (_, i) => `evt_reorder_${i}`);
    await Promise.all(
      ids.map(async (id, i) => {
        await new Promise((resolve) => setTimeout(resolve, i * 20));
        const body = envelopeBody(id, { created: 1 });
        expect((await postSigned(listen.ready.listener, body, SECRET)).status).toBe(200);
      }),
    );
    const arrived = listen.store.all().map((c) => c.envelope?.id);
    expect([...idsAtApp()].sort()).toEqual([...ids].sort());
    expect(idsAtApp()).not.toEqual(arrived);
    expect(listen.store.all().every((c) => c.injected?.includes('reorder'))).toBe(true);
  });

  it('delay: each delivery reaches the app only after the time given, and says so', async () => {
    const listen = await listenWith('delay=300', { api: false });
    const body = JSON.stringify({ id: 'evt_delayed', object: 'event', type: 'punch.created', created: 1, data: {} });
    const sent = performance.now();
    expect((await postSigned(listen.ready.listener, body, SECRET)).status).toBe(200);
    expect(app.received[0].at - sent).toBeGreaterThanOrEqual(290);
    expect(listen.store.ofEvent('evt_delayed')[0].injected).toEqual(['delay 300 ms']);
  });

  it('fail: the service records the failed attempt and retries; the app never sees it', async () => {
    const listen = await listenWith('fail=100%:503');
    const id = await emit('shift.published');
    await expect.poll(() => attemptsOf(id).length, { timeout: 10_000 }).toBeGreaterThanOrEqual(2);
    expect(attemptsOf(id)[0]).toMatchObject({ statusCode: 503, outcome: 'retrying', attempt: 1 });
    expect(idsAtApp()).not.toContain(id);
    const [capture] = listen.store.ofEvent(id);
    expect(capture).toMatchObject({ injected: ['fail 503'], rejected: { statusCode: 503, code: 'injected_fail' } });
  });

  it('timeout: the app has the event, and the service, answered only after its limit, retries it', async () => {
    const listen = await listenWith('timeout=100%');
    const id = await emit();
    await expect.poll(() => attemptsOf(id).length, { timeout: 15_000 }).toBeGreaterThanOrEqual(2);
    expect(attemptsOf(id)[0]).toMatchObject({ statusCode: null, outcome: 'retrying' });
    expect(attemptsOf(id)[0].error).toMatch(/timed out/);
    // The app took it the first time: the retry is the real duplicate.
    expect(idsAtApp().filter((at) => at === id).length).toBeGreaterThanOrEqual(2);
    const [first, retry] = listen.store.ofEvent(id);
    expect(first.forward?.statusCode).toBe(200);
    expect(retry.kind).toBe('duplicate');
  }, 30_000);

  it('is repeated by its seed: the same deliveries get the same faults', async () => {
    const runs: (string[] | undefined)[][] = [];
    for (const _run of [1, 2]) {
      const listen = await listenWith('duplicate=30%,delay=0-40,fail=20%:500', { seed: 4242, api: false });
      for (let i = 0; i < 12; i++) {
        const body = JSON.stringify({
          id: `evt_seed_${i}`,
          object: 'event',
          type: 'punch.created',
          created: 1,
          data: {},
        });
        await postSigned(listen.ready.listener, body, SECRET);
      }
      runs.push(
        listen.store
          .all()
          .filter((c) => !c.injected?.includes('duplicate'))
          .map((c) => c.injected),
      );
      await session?.close();
      session = undefined;
    }
    expect(runs[1]).toEqual(runs[0]);
    expect(runs[0].flat().some((word) => word?.startsWith('fail'))).toBe(true);
  });
});
