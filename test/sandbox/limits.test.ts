import { afterEach, describe, expect, it } from 'vitest';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';

let t: TestSandbox;
afterEach(() => t.close());

/** A clock the test moves by hand, for the per-minute and rolling 24-hour windows. */
function manualClock(start = Date.UTC(2026, 10, 21, 12)) {
  const clock = {
    ms: start,
    now: () => clock.ms,
    advance: (ms: number) => {
      clock.ms += ms;
    },
  };
  return clock;
}

async function keyFor(plan: string) {
  return (await t.call('POST', '/sandbox/keys', { body: { plan } })).body.apiKey as string;
}

describe('sandbox rate limits', () => {
  it('holds a trial account to 60 requests a minute with Retry-After', async () => {
    const clock = manualClock();
    t = await startTestSandbox({ now: clock.now });
    const key = await keyFor('trial');
    for (let i = 0; i < 60; i++) expect((await t.call('GET', '/event', { key })).status).toBe(200);
    clock.advance(30_000);
    const limited = await t.call('GET', '/event', { key });
    expect(limited.status).toBe(429);
    expect(limited.body.error).toMatchObject({ type: 'rate_limit_error', code: 'account_rate_limit_exceeded' });
    expect(limited.headers.get('retry-after')).toBe('30');
    clock.advance(30_001);
    expect((await t.call('GET', '/event', { key })).status).toBe(200);
  });

  it('holds a pro account to 600 a minute, shared by its keys', async () => {
    const clock = manualClock();
    t = await startTestSandbox({ now: clock.now });
    const second = (await t.call('POST', '/sandbox/keys', { body: { account: t.sandbox.account } })).body.apiKey;
    for (let i = 0; i < 300; i++) await t.call('GET', '/event');
    for (let i = 0; i < 300; i++) expect((await t.call('GET', '/event', { key: second })).status).toBe(200);
    expect((await t.call('GET', '/event')).body.error.code).toBe('account_rate_limit_exceeded');
  });

  it('guards each key at 1000 a minute (rate_limit_exceeded) on enterprise', async () => {
    const clock = manualClock();
    t = await startTestSandbox({ now: clock.now });
    const key = await keyFor('enterprise');
    for (let i = 0; i < 1000; i++) await t.call('GET', '/event', { key });
    const limited = await t.call('GET', '/event', { key });
    expect(limited.status).toBe(429);
    expect(limited.body.error.code).toBe('rate_limit_exceeded');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});

describe('sandbox trial caps', () => {
  it('caps a trial account at 5 endpoints in total: trial_resource_limit_exceeded', async () => {
    t = await startTestSandbox();
    const key = await keyFor('trial');
    for (let i = 1; i <= 5; i++) {
      expect(
        (await t.call('POST', '/webhookEndpoint', { key, body: { url: `https://e.com/${i}`, enabledEvents: ['*'] } }))
          .status,
      ).toBe(201);
    }
    const res = await t.call('POST', '/webhookEndpoint', {
      key,
      body: { url: 'https://e.com/6', enabledEvents: ['*'] },
    });
    expect(res.status).toBe(429);
    expect(res.body.error).toMatchObject({ type: 'rate_limit_error', code: 'trial_resource_limit_exceeded' });
  });

  it('caps endpoint creations at 20 per rolling 24 h: trial_resource_daily_limit_exceeded', async () => {
    const clock = manualClock();
    t = await startTestSandbox({ now: clock.now });
    const key = await keyFor('trial');
    const createAndDelete = async (i: number) => {
      const res = await t.call('POST', '/webhookEndpoint', {
        key,
        body: { url: `https://e.com/${i}`, enabledEvents: ['*'] },
      });
      if (res.status === 201) await t.call('DELETE', `/webhookEndpoint/${res.body.id}`, { key });
      clock.advance(2_000); // stay under 60 requests a minute
      return res;
    };
    for (let i = 0; i < 20; i++) expect((await createAndDelete(i)).status).toBe(201);
    const capped = await createAndDelete(20);
    expect(capped.status).toBe(429);
    expect(capped.body.error.code).toBe('trial_resource_daily_limit_exceeded');
    clock.advance(24 * 3_600_000 - 40_000); // the first creations fall out of the window, one by one
    expect((await createAndDelete(21)).status).toBe(201);
  });

  it('caps writes at 200 per rolling 24 h: trial_daily_writes_exceeded', async () => {
    const clock = manualClock();
    t = await startTestSandbox({ now: clock.now });
    const key = await keyFor('trial');
    const { body: endpoint } = await t.call('POST', '/webhookEndpoint', {
      key,
      body: { url: 'https://e.com/x', enabledEvents: ['*'] },
    });
    for (let i = 1; i < 200; i++) {
      if (i % 50 === 0) clock.advance(61_000);
      expect(
        (await t.call('POST', `/webhookEndpoint/${endpoint.id}`, { key, body: { description: `v${i}` } })).status,
      ).toBe(200);
    }
    clock.advance(61_000);
    const capped = await t.call('POST', `/webhookEndpoint/${endpoint.id}`, { key, body: { description: 'one more' } });
    expect(capped.status).toBe(429);
    expect(capped.body.error.code).toBe('trial_daily_writes_exceeded');
    expect((await t.call('GET', `/webhookEndpoint/${endpoint.id}`, { key })).status).toBe(200); // reads still work
  });

  it('does not apply trial caps to pro accounts', async () => {
    t = await startTestSandbox();
    for (let i = 1; i <= 6; i++) {
      expect(
        (await t.call('POST', '/webhookEndpoint', { body: { url: `https://e.com/${i}`, enabledEvents: ['*'] } }))
          .status,
      ).toBe(201);
    }
  });
});

describe('Idempotency-Key and Sandbox-Force-Error', () => {
  it('replays the cached response of a write instead of writing twice', async () => {
    t = await startTestSandbox();
    const headers = { 'idempotency-key': 'create-1' };
    const body = { url: 'https://e.com/once', enabledEvents: ['*'] };
    const first = await t.call('POST', '/webhookEndpoint', { body, headers });
    const again = await t.call('POST', '/webhookEndpoint', { body, headers });
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect((await t.call('GET', '/webhookEndpoint')).body.data).toHaveLength(1);
    const reused = await t.call('POST', '/webhookEndpoint', { body: { ...body, url: 'https://e.com/other' }, headers });
    expect(reused.status).toBe(400);
    expect(reused.body.error.param).toBe('Idempotency-Key');
  });

  it.each([
    ['internal_error', 500, 'api_error'],
    ['rate_limit_exceeded', 429, 'rate_limit_error'],
    ['account_rate_limit_exceeded', 429, 'rate_limit_error'],
  ])('Sandbox-Force-Error: %s answers %d %s', async (code, status, type) => {
    t = await startTestSandbox();
    const res = await t.call('GET', '/webhookEndpoint', { headers: { 'sandbox-force-error': code } });
    expect(res.status).toBe(status);
    expect(res.body.error).toMatchObject({ type, code });
    if (status === 429) expect(res.headers.get('retry-after')).toBe('1');
  });

  it('refuses an unknown Sandbox-Force-Error value', async () => {
    t = await startTestSandbox();
    const res = await t.call('GET', '/webhookEndpoint', { headers: { 'sandbox-force-error': 'teapot' } });
    expect(res.body.error).toMatchObject({ code: 'parameter_invalid', param: 'Sandbox-Force-Error' });
  });
});
