// What both test files check, written once: each scenario throws, saying what the handler did, when it
// does not hold. The runners only name them.
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { playScenario, sendDelivery, signDelivery, startSandbox } from 'clockhook/testing';
import { createApp } from '../app.mjs';

export const SECRET = 'whsec_example_0123456789abcdef';

/** The app on a free port, recording the events it acted on. */
export async function startApp({ secret = SECRET, handle } = {}) {
  const handled = [];
  const app = createApp({ secret, handle: handle ?? (async (event) => handled.push(event.id)) });
  const server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  return {
    url: `http://127.0.0.1:${server.address().port}/webhooks`,
    handled,
    close: () => new Promise((resolve) => server.closeAllConnections() || server.close(resolve)),
  };
}

export async function acceptsAValidDelivery(app) {
  const result = await sendDelivery(app.url, { secret: SECRET, type: 'punch.created', expect: 'accepted' });
  assert.ok(app.handled.includes(result.envelope.id));
}

export async function refusesATamperedDelivery(app) {
  const signed = signDelivery({ body: { id: 'evt_tampered', type: 'punch.created' }, secret: SECRET });
  await sendDelivery(app.url, {
    secret: SECRET,
    body: { id: 'evt_tampered', type: 'punch.created', data: { hours: 99 } },
    headers: { 'x-service-signature': signed.headers['x-service-signature'] },
    expect: 'refused',
  });
  assert.ok(!app.handled.includes('evt_tampered'));
}

export async function refusesAStaleDelivery(app) {
  await sendDelivery(app.url, { secret: SECRET, timestamp: Math.floor(Date.now() / 1000) - 600, expect: 'refused' });
}

export async function actsOnADuplicateOnce(app) {
  const body = {
    id: 'evt_twice',
    object: 'event',
    type: 'punch.created',
    api_version: '2026-11-01',
    created: 1,
    data: {},
  };
  await sendDelivery(app.url, { secret: SECRET, body, expect: 'accepted' });
  await sendDelivery(app.url, { secret: SECRET, body, expect: 'accepted' });
  assert.equal(app.handled.filter((id) => id === 'evt_twice').length, 1);
}

/** Through the sandbox: a handler that takes longer than the contract's 30 s is a failed attempt. */
export async function aSlowHandlerIsAFailedAttempt() {
  const sandbox = await startSandbox();
  let endpoint = { secret: '' };
  let entered;
  const started = new Promise((resolve) => (entered = resolve));
  const app = await startApp({ secret: () => endpoint.secret, handle: () => (entered(), new Promise(() => {})) });
  try {
    endpoint = await sandbox.createEndpoint(app.url);
    const event = await sandbox.trigger('punch.created');
    await started;
    // No need to wait 30 s: the sandbox's clock is the test's.
    await sandbox.advance(30_000);
    const attempt = await sandbox.waitForDelivery((d) => d.eventId === event.id);
    assert.equal(attempt.statusCode, null);
    assert.equal(attempt.error, 'timed out after 30000 ms');
  } finally {
    await app.close();
    await sandbox.close();
  }
}

/**
 * A morning's deliveries as clockhook recorded them (captures export --format scenario), checked in: played
 * again, each is answered as it was then, and the duplicate in it is acted on once.
 */
export async function answersTheRecordedMorningAsBefore(app) {
  const recorded = fileURLToPath(new URL('./morning.scenario.json', import.meta.url));
  const result = await playScenario(recorded, app.url, { secret: SECRET, speed: 'max' });
  assert.deepEqual(result.differences, [], result.summary);
  assert.equal(app.handled.filter((id) => id === 'evt_morning_punch').length, 1);
}
