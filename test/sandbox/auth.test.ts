import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';

let t: TestSandbox;
beforeAll(async () => {
  t = await startTestSandbox();
});
afterAll(() => t.close());

describe('sandbox authentication and permissions', () => {
  it.each([
    ['no Authorization header', null, {}],
    ['a malformed Authorization header', null, { authorization: 'Token abc' }],
    ['an unknown key', 'tt_live_unknown', {}],
  ])('answers 401 api_key_invalid to %s', async (_name, key, headers) => {
    const res = await t.call('GET', '/webhookEndpoint', { key, headers });
    expect(res.status).toBe(401);
    expect(res.body.error).toMatchObject({ type: 'authentication_error', code: 'api_key_invalid' });
  });

  it('answers 401 legacy_key_unsupported to a subscription-key header without bearer', async () => {
    const res = await t.call('GET', '/webhookEndpoint', {
      key: null,
      headers: { 'Ocp-Apim-Subscription-Key': t.sandbox.apiKey },
    });
    expect(res.status).toBe(401);
    expect(res.body.error).toMatchObject({ type: 'authentication_error', code: 'legacy_key_unsupported' });
  });

  it('prefers the bearer header when both are sent', async () => {
    const res = await t.call('GET', '/webhookEndpoint', { headers: { 'subscription-key': 'x' } });
    expect(res.status).toBe(200);
  });

  it('puts a requestId in every error body and in the Request-Id header', async () => {
    const res = await t.call('GET', '/webhookEndpoint', { key: null });
    expect(res.body.error.requestId).toMatch(/^req_/);
    expect(res.headers.get('request-id')).toBe(res.body.error.requestId);
    expect(Object.keys(res.body)).toEqual(['error']);
  });

  it.each([
    ['GET', '/webhookEndpoint', 'webhooks:read'],
    ['GET', '/webhookEndpoint/1', 'webhooks:read'],
    ['POST', '/webhookEndpoint', 'webhooks:write'],
    ['POST', '/webhookEndpoint/1', 'webhooks:write'],
    ['DELETE', '/webhookEndpoint/1', 'webhooks:write'],
    ['POST', '/webhookEndpoint/1/ping', 'webhooks:write'],
    ['GET', '/event', 'events:read'],
    ['GET', '/event/evt_x', 'events:read'],
    ['POST', '/event/evt_x/redeliver', 'events:write'],
  ])('%s %s needs %s: 403 insufficient_permissions without it', async (method, path, scope) => {
    const all = ['webhooks:read', 'webhooks:write', 'events:read', 'events:write'];
    const grant = await t.call('POST', '/sandbox/keys', {
      body: { account: t.sandbox.account, scopes: all.filter((s) => s !== scope) },
    });
    expect(grant.status).toBe(201);
    const res = await t.call(method, path, { key: grant.body.apiKey, body: method === 'POST' ? {} : undefined });
    expect(res.status).toBe(403);
    expect(res.body.error).toMatchObject({ type: 'authorization_error', code: 'insufficient_permissions' });
  });

  it('lets a key with only the needed scope through', async () => {
    const grant = await t.call('POST', '/sandbox/keys', {
      body: { account: t.sandbox.account, scopes: ['events:read'] },
    });
    expect((await t.call('GET', '/event', { key: grant.body.apiKey })).status).toBe(200);
  });

  it('refuses the admin routes to a restricted key', async () => {
    const grant = await t.call('POST', '/sandbox/keys', { body: { scopes: ['events:read'] } });
    const res = await t.call('POST', '/sandbox/events', { key: grant.body.apiKey, body: { type: 'punch.created' } });
    expect(res.status).toBe(403);
  });

  it('creates keys for new and existing accounts, validating plan and scopes', async () => {
    const fresh = await t.call('POST', '/sandbox/keys', { body: { plan: 'trial' } });
    expect(fresh.status).toBe(201);
    expect(fresh.body).toMatchObject({
      plan: 'trial',
      scopes: ['webhooks:read', 'webhooks:write', 'events:read', 'events:write'],
    });
    expect(fresh.body.apiKey).toMatch(/^tt_live_/);
    expect(fresh.body.account).not.toBe(t.sandbox.account);
    const same = await t.call('POST', '/sandbox/keys', { body: { account: fresh.body.account } });
    expect(same.body).toMatchObject({ account: fresh.body.account, plan: 'trial' });
    expect((await t.call('POST', '/sandbox/keys', { body: { plan: 'gold' } })).body.error.param).toBe('plan');
    expect((await t.call('POST', '/sandbox/keys', { body: { scopes: ['employees:read'] } })).body.error.param).toBe(
      'scopes',
    );
    expect((await t.call('POST', '/sandbox/keys', { body: { account: 'acct_nope' } })).status).toBe(404);
  });

  it('answers unknown routes and malformed JSON in the error envelope', async () => {
    const unknown = await t.call('GET', '/employee');
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toMatchObject({ type: 'invalid_request_error', code: 'resource_not_found' });
    const malformed = await t.call('POST', '/webhookEndpoint', { body: '{"url": ' });
    expect(malformed.status).toBe(400);
    expect(malformed.body.error).toMatchObject({
      type: 'invalid_request_error',
      code: 'parameter_invalid',
      param: 'body',
    });
    expect(malformed.body.error.requestId).toMatch(/^req_/);
  });

  it('serves an unauthenticated health check', async () => {
    const res = await t.call('GET', '/sandbox/health', { key: null });
    expect(res.status).toBe(200);
    expect(res.body.ok).toBe(true);
  });
});
