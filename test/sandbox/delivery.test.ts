import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LIMITS, verifySignature } from '../../src/contract/index.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { ManualClock } from '../../src/testing/clock.js';

const TIME_SCALE = 0.0001; // 1 min → 6 ms, 2 h → 720 ms
let t: TestSandbox;
let receivers: Receiver[] = [];

afterEach(async () => {
  await t?.close();
  await Promise.all(receivers.map((r) => r.close()));
  receivers = [];
});

async function receiver(...args: Parameters<typeof startReceiver>) {
  const r = await startReceiver(...args);
  receivers.push(r);
  return r;
}

async function endpointFor(url: string, enabledEvents: string[] = ['*']) {
  const res = await t.call('POST', '/webhookEndpoint', { body: { url, enabledEvents } });
  expect(res.status).toBe(201);
  return res.body as { id: number; secret: string };
}

const emit = (type: string, data?: unknown) => t.call('POST', '/sandbox/events', { body: { type, data } });
const failWith = (status: number) =>
  receiver((_r, res) => {
    res.writeHead(status);
    res.end('nope');
  });

describe('sandbox delivery worker', () => {
  it('POSTs the signed envelope with X-Service-Event to subscribed enabled endpoints only', async () => {
    t = await startTestSandbox({ apiVersion: '2026-11-01' });
    const app = await receiver();
    const subscribed = await endpointFor(`${app.url}/a`, ['punch.created']);
    await endpointFor(`${app.url}/b`, ['shift.published']);
    const disabled = await endpointFor(`${app.url}/c`, ['*']);
    await t.call('POST', `/webhookEndpoint/${disabled.id}`, { body: { status: 'disabled' } });

    const emitted = await emit('punch.created');
    expect(emitted.status).toBe(201);
    expect(emitted.body).toMatchObject({ object: 'event', type: 'punch.created', delivery_attempts: [] });
    await t.waitForAttempts(1);
    expect(app.received).toHaveLength(1);
    const [request] = app.received;
    expect(request.url).toBe('/a');
    expect(request.headers['x-service-event']).toBe('punch.created');
    expect(request.headers['content-type']).toBe('application/json');
    // Only what a webhook sender sends: none of the Accept, Sec-Fetch-Mode… headers fetch adds.
    expect(Object.keys(request.headers).sort()).toEqual([
      'connection',
      'content-length',
      'content-type',
      'host',
      'user-agent',
      'x-service-event',
      'x-service-signature',
    ]);
    const envelope = JSON.parse(request.body.toString());
    expect(envelope).toEqual({
      id: emitted.body.id,
      object: 'event',
      type: 'punch.created',
      api_version: '2026-11-01',
      created: emitted.body.created,
      data: emitted.body.data,
    });
    const verdict = verifySignature({
      header: request.headers['x-service-signature'] as string,
      payload: request.body,
      secret: subscribed.secret,
    });
    expect(verdict.ok).toBe(true);
  });

  it('records an attempt only once it is complete, with the DESIGN.md fields', async () => {
    t = await startTestSandbox();
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const app = await receiver((_r, res) => {
      held.then(() => {
        res.writeHead(200);
        res.end('thanks');
      });
    });
    const endpoint = await endpointFor(app.url);
    const { body: event } = await emit('employee.created', { id: 1, custom: true });
    await app.waitFor(1);
    expect((await t.call('GET', `/event/${event.id}`)).body.delivery_attempts).toEqual([]);
    release();
    await t.waitForAttempts(1);
    const attempts = (await t.call('GET', `/event/${event.id}`)).body.delivery_attempts;
    expect(attempts).toEqual([
      {
        attempt: 1,
        endpointId: endpoint.id,
        statusCode: 200,
        responseBody: 'thanks',
        durationMs: expect.any(Number),
        error: null,
        createdAt: expect.any(String),
      },
    ]);
    expect((await t.call('GET', `/event/${event.id}`)).body.data).toEqual({ id: 1, custom: true });
  });

  it('retries on the contract schedule, then marks the delivery failed', async () => {
    // The sandbox's timers on a clock the test moves: each attempt comes when its delay has passed, not before.
    const clock = new ManualClock();
    t = await startTestSandbox({ setTimer: clock.setTimer });
    const app = await failWith(500);
    await endpointFor(app.url);
    const { body: event } = await emit('punch.created');
    await t.waitForAttempts(1);
    for (const [i, delay] of LIMITS.retryDelaysMs.slice(1).entries()) {
      await clock.advance(delay - 1);
      expect(t.attempts, `attempt ${i + 2} before its delay`).toHaveLength(i + 1);
      await clock.advance(1);
      await t.waitForAttempts(i + 2);
    }
    expect(t.attempts.map((r) => r.outcome)).toEqual(['retrying', 'retrying', 'retrying', 'retrying', 'failed']);
    const { body } = await t.call('GET', `/event/${event.id}`);
    expect(
      body.delivery_attempts.map((a: { attempt: number; statusCode: number }) => [a.attempt, a.statusCode]),
    ).toEqual([
      [1, 500],
      [2, 500],
      [3, 500],
      [4, 500],
      [5, 500],
    ]);
    // No sixth attempt: a day later, nothing more arrived.
    await clock.advance(24 * 3_600_000);
    expect(app.received).toHaveLength(5);
  });

  it('stops retrying once an attempt succeeds', async () => {
    t = await startTestSandbox({ timeScale: TIME_SCALE });
    let calls = 0;
    const app = await receiver((_r, res) => {
      res.writeHead(++calls < 3 ? 503 : 204);
      res.end();
    });
    await endpointFor(app.url);
    await emit('punch.created');
    const reports = await t.waitForAttempts(3);
    expect(reports.map((r) => [r.statusCode, r.outcome])).toEqual([
      [503, 'retrying'],
      [503, 'retrying'],
      [204, 'delivered'],
    ]);
  });

  it('disables an endpoint after 10 consecutive failed deliveries; a delivered one resets the count', async () => {
    t = await startTestSandbox({ timeScale: TIME_SCALE });
    const app = await failWith(500);
    const endpoint = await endpointFor(app.url);
    for (let i = 0; i < 9; i++) await emit('punch.created');
    await t.waitForAttempts(45, 20_000);
    expect((await t.call('GET', `/webhookEndpoint/${endpoint.id}`)).body.status).toBe('enabled');

    // One delivered delivery resets the count: nine more failures do not disable it.
    app.setResponder((_r, res) => {
      res.writeHead(200);
      res.end();
    });
    await emit('punch.created');
    await t.waitForAttempts(46);
    app.setResponder((_r, res) => {
      res.writeHead(500);
      res.end();
    });
    for (let i = 0; i < 9; i++) await emit('punch.created');
    await t.waitForAttempts(91, 20_000);
    expect((await t.call('GET', `/webhookEndpoint/${endpoint.id}`)).body.status).toBe('enabled');

    await emit('punch.created');
    const reports = await t.waitForAttempts(96, 20_000);
    expect(reports.at(-1)).toMatchObject({ outcome: 'failed', endpointDisabled: true });
    expect((await t.call('GET', `/webhookEndpoint/${endpoint.id}`)).body.status).toBe('disabled');

    // Disabled: no more deliveries; re-enabled: they resume.
    await emit('punch.created');
    const redeliver = await t.call('POST', `/event/${(await emit('punch.created')).body.id}/redeliver`);
    expect(redeliver.body.endpointsNotified).toBe(0);
    await t.call('POST', `/webhookEndpoint/${endpoint.id}`, { body: { status: 'enabled' } });
    // Re-enabled, the count starts again: one more failed delivery does not disable it.
    await emit('punch.created');
    await t.waitForAttempts(101, 20_000);
    expect((await t.call('GET', `/webhookEndpoint/${endpoint.id}`)).body.status).toBe('enabled');
    app.setResponder((_r, res) => {
      res.writeHead(200);
      res.end();
    });
    const before = app.received.length;
    await emit('punch.created');
    await app.waitFor(before + 1);
    expect(app.received).toHaveLength(before + 1);
  }, 30_000);

  it('makes no retry to an endpoint disabled meanwhile (it is excluded from deliveries), but still pings it', async () => {
    // Attempt 2 comes only when the test moves the clock: the endpoint is disabled first however busy the machine.
    const clock = new ManualClock();
    t = await startTestSandbox({ setTimer: clock.setTimer });
    const app = await failWith(500);
    const endpoint = await endpointFor(app.url);
    const { body: event } = await emit('punch.created');
    await t.waitForAttempts(1);
    expect(
      (await t.call('POST', `/webhookEndpoint/${endpoint.id}`, { body: { status: 'disabled' } })).body.status,
    ).toBe('disabled');
    // Past every retry's time: none goes to the disabled endpoint. The ping after them is the next request it gets.
    await clock.advance(LIMITS.retryDelaysMs.reduce((a: number, b: number) => a + b, 0));
    await t.call('POST', `/webhookEndpoint/${endpoint.id}/ping`);
    await app.waitFor(2);
    await t.waitForAttempts(2);
    expect(app.received[1].headers['x-service-event']).toBe('webhook_endpoint.ping');
    expect(app.received).toHaveLength(2);
    expect((await t.call('GET', `/event/${event.id}`)).body.delivery_attempts).toHaveLength(1);
  });

  it('runs deliveries concurrently: a slow endpoint does not delay another', async () => {
    t = await startTestSandbox({ deliveryTimeoutMs: 5_000 });
    let releaseSlow: () => void = () => {};
    const slow = await receiver((_r, res) => {
      releaseSlow = () => {
        res.writeHead(200);
        res.end();
      };
    });
    const fast = await receiver();
    await endpointFor(slow.url);
    await endpointFor(fast.url);
    await emit('punch.created');
    await fast.waitFor(1);
    await t.waitForAttempts(1);
    expect(t.attempts[0].url).toBe(fast.url);
    releaseSlow();
    await t.waitForAttempts(2);
  });

  it('counts a time-out as a failed attempt with statusCode null', async () => {
    t = await startTestSandbox({ deliveryTimeoutMs: 200, timeScale: 1 });
    const app = await receiver(() => {}); // never answers
    await endpointFor(app.url);
    await emit('punch.created');
    const [report] = await t.waitForAttempts(1);
    expect(report).toMatchObject({ statusCode: null, outcome: 'retrying', error: 'timed out after 200 ms' });
  });

  it('stops an attempt in flight when it closes: no attempt recorded, the delivery left pending', async () => {
    t = await startTestSandbox({ deliveryTimeoutMs: 60_000, timeScale: 1 });
    let arrived = () => {};
    const reached = new Promise<void>((resolve) => (arrived = resolve));
    const app = await receiver(() => arrived()); // never answers
    await endpointFor(app.url);
    const { body: event } = await emit('punch.created');
    await reached;
    // Within the test's time, not the attempt's 60 s limit.
    await t.sandbox.close();
    expect(t.attempts).toEqual([]);
    const saved = JSON.parse(await readFile(join(t.dir, 'sandbox-db.json'), 'utf8'));
    expect(saved.deliveries.filter((d: { eventId: string }) => d.eventId === event.id)).toMatchObject([
      { state: 'pending' },
    ]);
  });

  it('survives what a receiver does: refused, reset, redirect, huge and binary answers', async () => {
    t = await startTestSandbox();
    const refused = await receiver();
    await refused.close();
    const reset = await receiver((_r, _res, req) => req.socket.destroy());
    const redirect = await receiver((_r, res) => {
      res.writeHead(302, { location: 'https://example.com/' });
      res.end();
    });
    const huge = await receiver((_r, res) => {
      res.writeHead(200);
      res.end('x'.repeat(2_000_000));
    });
    const binary = await receiver((_r, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.end(Buffer.from([0xff, 0xfe, 0x00, 0x01, 0x80]));
    });
    for (const r of [refused, reset, redirect, huge, binary]) await endpointFor(r.url);
    await emit('punch.created');
    const reports = await t.waitForAttempts(5);
    const byUrl = new Map(reports.map((r) => [r.url, r]));
    expect(byUrl.get(refused.url)).toMatchObject({
      statusCode: null,
      error: 'connection refused',
      outcome: 'retrying',
    });
    expect(byUrl.get(reset.url)).toMatchObject({
      statusCode: null,
      error: 'the receiver closed the connection without answering',
      outcome: 'retrying',
    });
    expect(byUrl.get(redirect.url)).toMatchObject({ statusCode: 302, outcome: 'retrying' });
    expect(byUrl.get(huge.url)).toMatchObject({ statusCode: 200, outcome: 'delivered' });
    expect(byUrl.get(binary.url)).toMatchObject({ statusCode: 200, outcome: 'delivered' });
    expect(redirect.received).toHaveLength(1);
    const event = (await t.call('GET', '/event')).body.data[0];
    const hugeAttempt = event.delivery_attempts.find((a: { endpointId: number }) => a.endpointId === 4);
    expect(hugeAttempt.responseBody).toHaveLength(4000);
    // The sandbox still answers.
    expect((await t.call('GET', '/sandbox/health', { key: null })).status).toBe(200);
  });
});
