import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PING_EVENT_TYPE, verifySignature } from '../../src/contract/index.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';

let t: TestSandbox;
let app: Receiver;
beforeEach(async () => {
  t = await startTestSandbox();
  app = await startReceiver();
});
afterEach(async () => {
  await t.close();
  await app.close();
});

async function endpointFor(path: string, enabledEvents: string[]) {
  return (await t.call('POST', '/webhookEndpoint', { body: { url: `${app.url}${path}`, enabledEvents } })).body as {
    id: number;
    secret: string;
  };
}
const emit = (type: string) => t.call('POST', '/sandbox/events', { body: { type } });

describe('ping', () => {
  it('answers 202 with the acknowledgement and delivers to that endpoint only, ignoring its filter', async () => {
    const target = await endpointFor('/target', ['shift.published']);
    await endpointFor('/other', ['*']);
    const res = await t.call('POST', `/webhookEndpoint/${target.id}/ping`);
    expect(res.status).toBe(202);
    expect(res.body).toEqual({
      eventId: expect.stringMatching(/^evt_/),
      endpointId: target.id,
      object: 'webhook_endpoint_ping',
      message: expect.any(String),
    });
    await t.waitForAttempts(1);
    expect(app.received.map((r) => r.url)).toEqual(['/target']);
    const [request] = app.received;
    expect(request.headers['x-service-event']).toBe(PING_EVENT_TYPE);
    const envelope = JSON.parse(request.body.toString());
    expect(envelope).toMatchObject({ id: res.body.eventId, object: 'event', type: PING_EVENT_TYPE });
    // DESIGN.md: ping data is the endpoint without its secret.
    expect(envelope.data).toMatchObject({ id: target.id, url: `${app.url}/target` });
    expect(envelope.data.secret).toBeUndefined();
    expect(
      verifySignature({
        header: request.headers['x-service-signature'] as string,
        payload: request.body,
        secret: target.secret,
      }).ok,
    ).toBe(true);
  });

  it('pings a disabled endpoint too (it is the diagnostic for a broken one)', async () => {
    const target = await endpointFor('/t', ['*']);
    await t.call('POST', `/webhookEndpoint/${target.id}`, { body: { status: 'disabled' } });
    expect((await t.call('POST', `/webhookEndpoint/${target.id}/ping`)).status).toBe(202);
    await app.waitFor(1);
  });
});

describe('events', () => {
  it('lists newest first with a type filter, and gets one with delivery_attempts', async () => {
    await endpointFor('/a', ['*']);
    const first = await emit('punch.created');
    const second = await emit('shift.published');
    const third = await emit('punch.created');
    await t.waitForAttempts(3);
    const all = await t.call('GET', '/event');
    expect(all.body).toMatchObject({ object: 'list', hasMore: false, nextCursor: null });
    expect(all.body.data.map((e: { id: string }) => e.id)).toEqual([third.body.id, second.body.id, first.body.id]);
    const punches = await t.call('GET', '/event?type=punch.created&limit=1');
    expect(punches.body.data.map((e: { id: string }) => e.id)).toEqual([third.body.id]);
    expect(punches.body.hasMore).toBe(true);
    const next = await t.call('GET', `/event?type=punch.created&limit=1&cursor=${punches.body.nextCursor}`);
    expect(next.body.data.map((e: { id: string }) => e.id)).toEqual([first.body.id]);
    const one = await t.call('GET', `/event/${first.body.id}`);
    expect(one.body).toMatchObject({
      id: first.body.id,
      object: 'event',
      type: 'punch.created',
      apiVersion: '2026-11-01',
    });
    expect(one.body.delivery_attempts).toHaveLength(1);
    expect((await t.call('GET', '/event?type=nope')).body.error.param).toBe('type');
  });

  it("answers 404 for unknown events and another account's", async () => {
    const event = await emit('punch.created');
    const other = await t.call('POST', '/sandbox/keys', { body: {} });
    expect((await t.call('GET', '/event/evt_nope')).status).toBe(404);
    const foreign = await t.call('GET', `/event/${event.body.id}`, { key: other.body.apiKey });
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.code).toBe('resource_not_found');
    expect((await t.call('POST', `/event/${event.body.id}/redeliver`, { key: other.body.apiKey })).status).toBe(404);
  });

  it('emits sample data when none is given and refuses bad types', async () => {
    const res = await emit('employee.created');
    expect(res.body.data).toMatchObject({ firstName: 'Ada' });
    expect((await emit('webhook_endpoint.ping')).body.error).toMatchObject({
      code: 'parameter_invalid',
      param: 'type',
    });
    expect((await emit('nope')).status).toBe(400);
    expect(
      (await t.call('POST', '/sandbox/events', { body: { type: 'punch.created', data: [1] } })).body.error.param,
    ).toBe('data');
  });
});

describe('redeliver', () => {
  it('re-sends the same event id to the endpoints enabled and subscribed now', async () => {
    const early = await endpointFor('/early', ['punch.created']);
    const event = await emit('punch.created');
    await t.waitForAttempts(1);
    await endpointFor('/late', ['*']); // created after the event: included
    await endpointFor('/unsubscribed', ['shift.published']);
    const disabled = await endpointFor('/disabled', ['*']);
    await t.call('POST', `/webhookEndpoint/${disabled.id}`, { body: { status: 'disabled' } });

    const res = await t.call('POST', `/event/${event.body.id}/redeliver`);
    expect(res.status).toBe(202);
    expect(res.body).toEqual({
      eventId: event.body.id,
      endpointsNotified: 2,
      object: 'webhook_event_redelivery',
      message: expect.any(String),
    });
    await t.waitForAttempts(3);
    expect(
      app.received
        .slice(1)
        .map((r) => r.url)
        .sort(),
    ).toEqual(['/early', '/late']);
    for (const r of app.received) expect(JSON.parse(r.body.toString()).id).toBe(event.body.id);
    const { body } = await t.call('GET', `/event/${event.body.id}`);
    // Every attempt, across redeliveries, grouped under the original event.
    expect(body.delivery_attempts).toHaveLength(3);
    expect(body.delivery_attempts.filter((a: { endpointId: number }) => a.endpointId === early.id)).toHaveLength(2);
  });

  it('succeeds with endpointsNotified 0 when no endpoint qualifies', async () => {
    const event = await emit('punch.created');
    const res = await t.call('POST', `/event/${event.body.id}/redeliver`);
    expect(res).toMatchObject({ status: 202, body: { endpointsNotified: 0 } });
  });

  it('refuses a ping id with 400 cannot_redeliver_synthetic_event', async () => {
    const target = await endpointFor('/t', ['*']);
    const ping = await t.call('POST', `/webhookEndpoint/${target.id}/ping`);
    const res = await t.call('POST', `/event/${ping.body.eventId}/redeliver`);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code: 'cannot_redeliver_synthetic_event' });
  });
});

describe('retention', () => {
  it('keeps the newest maxEvents events, and any event still being delivered', async () => {
    const small = await startTestSandbox({ maxEvents: 3 });
    const failing = await startReceiver((_request, res) => {
      res.writeHead(500);
      res.end();
    });
    try {
      const emitIn = async (type: string) =>
        (await small.call('POST', '/sandbox/events', { body: { type } })).body as { id: string };
      await small.call('POST', '/webhookEndpoint', { body: { url: failing.url, enabledEvents: ['shift.published'] } });
      // Its first attempt fails; the retry is a minute away, so the delivery stays pending.
      const retrying = await emitIn('shift.published');
      await small.waitForAttempts(1);
      const punches = [];
      for (let i = 0; i < 4; i++) punches.push(await emitIn('punch.created'));
      const listed = (await small.call('GET', '/event?limit=100')).body as { data: { id: string }[] };
      expect(listed.data.map((e) => e.id)).toEqual([punches[3].id, punches[2].id, retrying.id]);
      expect((await small.call('GET', `/event/${punches[0].id}`)).status).toBe(404);
      const kept = (await small.call('GET', `/event/${retrying.id}`)).body as { delivery_attempts: unknown[] };
      expect(kept.delivery_attempts).toHaveLength(1);
    } finally {
      await small.close();
      await failing.close();
    }
  });

  it('refuses a maxEvents that is not a positive integer', async () => {
    await expect(startTestSandbox({ maxEvents: 0 })).rejects.toThrow(/maxEvents must be a positive integer/);
  });
});
