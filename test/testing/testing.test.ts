import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixtureOf } from '../../src/captures/index.js';
import { verifySignature } from '../../src/contract/index.js';
import type { Capture } from '../../src/store/index.js';
import { checkReceiver, sendDelivery, signDelivery, startSandbox, type TestSandbox } from '../../src/testing/index.js';
import { type Receiver, startReceiver } from '../helpers/receiver.js';

const SECRET = 'whsec_testing_library_0123456789';

/** A receiver that verifies with `secret` and answers 200, 400 on a bad signature; `mode` changes that. */
async function verifyingReceiver(secret: () => string) {
  const state = { mode: 'ok' as 'ok' | 'fail' | 'hang' };
  const receiver = await startReceiver((request, res) => {
    if (state.mode === 'hang') return; // never answers
    const check = verifySignature({
      header: request.headers['x-service-signature'],
      payload: request.body,
      secret: secret(),
    });
    if (state.mode === 'fail') res.writeHead(500).end('{"error":"handler broken"}');
    else res.writeHead(check.ok ? 200 : 400).end(check.ok ? 'ok' : `bad signature: ${check.reason}`);
  });
  return { receiver, state };
}

describe('startSandbox', () => {
  let sandbox: TestSandbox;
  let app: Receiver;
  let state: { mode: 'ok' | 'fail' | 'hang' };
  let endpoint: { id: number; secret: string };
  beforeAll(async () => {
    sandbox = await startSandbox();
    const started = await verifyingReceiver(() => endpoint.secret);
    app = started.receiver;
    state = started.state;
    endpoint = await sandbox.createEndpoint(`${app.url}/hooks`, { events: ['punch.created', 'time_card.approved'] });
  });
  afterAll(async () => {
    await sandbox.close();
    await sandbox.close(); // safe twice
    await app.close();
  });

  it('delivers a triggered event, with set, signed with the endpoint secret, and records the attempt', async () => {
    state.mode = 'ok';
    const event = await sandbox.trigger('punch.created', { set: { note: 'late', 'tags[0]': 'night' } });
    const delivery = await sandbox.waitForDelivery((d) => d.eventId === event.id);
    expect(delivery).toMatchObject({
      attempt: 1,
      endpointId: endpoint.id,
      statusCode: 200,
      responseBody: 'ok',
      type: 'punch.created',
    });
    const received = JSON.parse(app.received.at(-1)!.body.toString());
    expect(received.data).toMatchObject({ note: 'late', tags: ['night'] });
    expect(await sandbox.deliveries({ eventId: event.id })).toHaveLength(1);
  });

  it('brings the retries (1, 5, 30 min, 2 h) with advance, then gives up after five attempts', async () => {
    state.mode = 'fail';
    const event = await sandbox.trigger('time_card.approved');
    await sandbox.waitForDelivery((d) => d.eventId === event.id && d.attempt === 1);
    for (const [attempt, wait] of [
      [2, 60_000],
      [3, 5 * 60_000],
      [4, 30 * 60_000],
      [5, 2 * 3_600_000],
    ] as const) {
      await sandbox.advance(wait - 1);
      expect((await sandbox.deliveries({ eventId: event.id })).length, `before attempt ${attempt}`).toBe(attempt - 1);
      await sandbox.advance(1);
      await sandbox.waitForDelivery((d) => d.eventId === event.id && d.attempt === attempt);
    }
    await sandbox.advance(24 * 3_600_000);
    const attempts = await sandbox.deliveries({ eventId: event.id });
    expect(attempts.map((d) => d.statusCode)).toEqual([500, 500, 500, 500, 500]);
  });

  it('counts a handler that does not answer within 30 s as a failed attempt, with advance', async () => {
    state.mode = 'hang';
    const before = app.received.length;
    const event = await sandbox.trigger('punch.created');
    await app.waitFor(before + 1);
    await sandbox.advance(30_000);
    const delivery = await sandbox.waitForDelivery((d) => d.eventId === event.id);
    expect(delivery).toMatchObject({ statusCode: null, error: 'timed out after 30000 ms' });
  });

  it("says in waitForDelivery's error what the handler did", async () => {
    state.mode = 'fail';
    const event = await sandbox.trigger('punch.created');
    await expect(
      sandbox.waitForDelivery((d) => d.eventId === event.id && d.statusCode === 200, { timeout: 1500 }),
    ).rejects.toThrow(
      new RegExp(
        `no matching delivery within 1500 ms; .*attempt 1 of punch\\.created ${event.id} to endpoint ${endpoint.id}: 500: \\{"error":"handler broken"\\}`,
      ),
    );
  });
});

describe('signDelivery and sendDelivery', () => {
  let app: Receiver;
  beforeAll(async () => {
    app = (await verifyingReceiver(() => SECRET)).receiver;
  });
  afterAll(() => app.close());

  it('sign a body as the service does; a timestamp makes a stale one', () => {
    const signed = signDelivery({ body: { id: 'evt_1', type: 'punch.created' }, secret: SECRET });
    expect(signed.headers['x-service-event']).toBe('punch.created');
    expect(
      verifySignature({ header: signed.headers['x-service-signature'], payload: signed.body, secret: SECRET }).ok,
    ).toBe(true);
    const stale = signDelivery({ body: 'x', secret: SECRET, timestamp: Math.floor(Date.now() / 1000) - 600 });
    const check = verifySignature({
      header: stale.headers['x-service-signature'],
      payload: stale.body,
      secret: SECRET,
    });
    expect(check).toMatchObject({ ok: false, reason: 'timestamp_outside_tolerance' });
  });

  it('send a sample, a fixture or a body; expect says what the handler did when it is not so', async () => {
    const sample = await sendDelivery(`${app.url}/`, {
      secret: SECRET,
      type: 'employee.created',
      set: { firstName: 'Zoë' },
      expect: 'accepted',
    });
    expect(sample.status).toBe(200);
    expect(JSON.parse(app.received.at(-1)!.body.toString()).data.firstName).toBe('Zoë');
    const capture = {
      method: 'POST',
      path: '/',
      headers: { 'x-service-signature': 't=1,v1=00' },
      envelope: null,
    } as unknown as Capture;
    const fixture = fixtureOf(capture, Buffer.from('{"id":"evt_fixture","type":"punch.created"}'));
    expect((await sendDelivery(`${app.url}/`, { secret: SECRET, fixture, expect: 'accepted' })).status).toBe(200);
    const stale = Math.floor(Date.now() / 1000) - 600;
    expect((await sendDelivery(`${app.url}/`, { secret: SECRET, timestamp: stale, expect: 'refused' })).status).toBe(
      400,
    );
    await expect(
      sendDelivery(`${app.url}/`, { secret: 'whsec_other', type: 'punch.created', expect: 'accepted' }),
    ).rejects.toThrow(
      /^the handler answered 400 to a validly signed delivery of punch\.created evt_\w+: bad signature: signature_mismatch$/,
    );
  });
});

describe('faults on purpose, for a test that a handler is idempotent', () => {
  it('sendDelivery with duplicate sends the same event twice, each signed; a non-idempotent handler is caught', async () => {
    const processed = new Map<string, number>();
    const app = await startReceiver((request, res) => {
      const check = verifySignature({
        header: request.headers['x-service-signature'],
        payload: request.body,
        secret: SECRET,
      });
      if (!check.ok) return res.writeHead(400).end();
      const { id } = JSON.parse(request.body.toString());
      processed.set(id, (processed.get(id) ?? 0) + 1); // no deduplication: the bug a test must find
      res.writeHead(200).end('ok');
    });
    try {
      const sent = await sendDelivery(`${app.url}/`, { secret: SECRET, duplicate: true, expect: 'accepted' });
      expect(sent.duplicate?.status).toBe(200);
      expect(app.received.map((r) => r.body.toString())).toEqual([
        app.received[0].body.toString(),
        app.received[0].body.toString(),
      ]);
      expect(processed.get(sent.envelope!.id)).toBe(2);
    } finally {
      await app.close();
    }
  });

  it('startSandbox with faults delivers each event twice, and events triggered together in reverse order', async () => {
    const app = await startReceiver();
    const twice = await startSandbox({ faults: { duplicate: true } });
    const reversed = await startSandbox({ faults: { reorder: true } });
    try {
      await twice.createEndpoint(`${app.url}/twice`);
      const event = await twice.trigger('punch.created');
      // The redelivery is a delivery of its own: its attempt is its first, the event's second.
      await expect.poll(async () => (await twice.deliveries({ eventId: event.id })).length).toBe(2);
      expect(app.received.filter((r) => JSON.parse(r.body.toString()).id === event.id)).toHaveLength(2);

      await reversed.createEndpoint(`${app.url}/reversed`);
      const ids: string[] = [];
      for (const type of ['punch.created', 'punch.updated', 'punch.deleted'])
        ids.push((await reversed.trigger(type)).id);
      await reversed.waitForDelivery((d) => d.eventId === ids[0]);
      await expect
        .poll(() => app.received.filter((r) => r.url === '/reversed').map((r) => JSON.parse(r.body.toString()).id))
        .toEqual([...ids].reverse());
    } finally {
      await twice.close();
      await reversed.close();
      await app.close();
    }
  });
});

describe('checkReceiver', () => {
  it("is clockhook check as a call: the README's correct receiver passes every check", async () => {
    const child = fork(fileURLToPath(new URL('../fixtures/correct-receiver.mjs', import.meta.url)), [], {
      env: { ...process.env, WEBHOOK_SECRET: SECRET, PORT: '0' },
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    try {
      const port = await new Promise<number>((resolve) =>
        child.once('message', (m: { port: number }) => resolve(m.port)),
      );
      const url = `http://127.0.0.1:${port}`;
      const report = await checkReceiver(url, { secret: SECRET, dedupeProbe: `${url}/dedupe` });
      expect(report.checks.filter((c) => c.status !== 'pass')).toEqual([]);
      expect(report.ok).toBe(true);
    } finally {
      child.kill();
    }
  });
});
