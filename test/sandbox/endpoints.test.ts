import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';

let t: TestSandbox;
beforeEach(async () => {
  t = await startTestSandbox();
});
afterEach(() => t.close());

const create = (body: unknown, key?: string) => t.call('POST', '/webhookEndpoint', { body, key });

describe('sandbox webhook endpoints', () => {
  it('creates with 201 and a whsec_ secret that GET never shows', async () => {
    const res = await create({
      url: 'https://example.com/hooks',
      enabledEvents: ['punch.created'],
      description: 'mine',
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      object: 'webhook_endpoint',
      url: 'https://example.com/hooks',
      enabledEvents: ['punch.created'],
      description: 'mine',
      status: 'enabled',
    });
    expect(Number.isInteger(res.body.id)).toBe(true);
    expect(res.body.secret).toMatch(/^whsec_/);
    const got = await t.call('GET', `/webhookEndpoint/${res.body.id}`);
    expect(got.status).toBe(200);
    expect(got.body.secret).toBeUndefined();
    expect(JSON.stringify(got.body)).not.toContain(res.body.secret);
    const list = await t.call('GET', '/webhookEndpoint');
    expect(JSON.stringify(list.body)).not.toContain(res.body.secret);
  });

  it('accepts eventTypes as the subscription field too', async () => {
    const res = await create({ url: 'https://example.com/a', eventTypes: ['*'] });
    expect(res.status).toBe(201);
    expect(res.body.enabledEvents).toEqual(['*']);
  });

  it.each([
    ['a missing url', { enabledEvents: ['*'] }, 'url'],
    ['plain http to a public host', { url: 'http://example.com/h', enabledEvents: ['*'] }, 'url'],
    ['a url that is not a URL', { url: 'not a url', enabledEvents: ['*'] }, 'url'],
    ['a missing subscription', { url: 'https://example.com/h' }, 'enabledEvents'],
    ['an unknown event type', { url: 'https://example.com/h', enabledEvents: ['punch.exploded'] }, 'enabledEvents'],
    ['the ping type', { url: 'https://example.com/h', eventTypes: ['webhook_endpoint.ping'] }, 'eventTypes'],
    ['an empty subscription', { url: 'https://example.com/h', enabledEvents: [] }, 'enabledEvents'],
    ['a non-string description', { url: 'https://example.com/h', enabledEvents: ['*'], description: 5 }, 'description'],
    ['an unknown field', { url: 'https://example.com/h', enabledEvents: ['*'], colour: 'red' }, 'colour'],
  ])('refuses %s with 400 parameter_invalid, param and errors[]', async (_name, body, param) => {
    const res = await create(body);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code: 'parameter_invalid', param });
    expect(res.body.error.errors).toContainEqual({ field: param, message: expect.any(String) });
  });

  it('lists every problem of a multi-field failure', async () => {
    const res = await create({ url: 'ftp://x', enabledEvents: ['nope'] });
    expect(res.body.error.errors.map((e: { field: string }) => e.field)).toEqual(['url', 'enabledEvents']);
  });

  it('names the valid types when a type is unknown', async () => {
    const res = await create({ url: 'https://example.com/h', enabledEvents: ['punch.exploded'] });
    expect(res.body.error.message).toContain('schedule.published');
  });

  it.each(['http://127.0.0.1:3000/h', 'http://localhost:3000/h', 'http://[::1]:3000/h'])(
    'allows plain http to loopback %s',
    async (url) => {
      expect((await create({ url, enabledEvents: ['*'] })).status).toBe(201);
    },
  );

  it('updates partially, keeping omitted fields', async () => {
    const { body: created } = await create({
      url: 'https://example.com/h',
      enabledEvents: ['punch.created'],
      description: 'first',
    });
    const res = await t.call('POST', `/webhookEndpoint/${created.id}`, { body: { description: 'second' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      url: 'https://example.com/h',
      enabledEvents: ['punch.created'],
      description: 'second',
      status: 'enabled',
    });
    expect(res.body.secret).toBeUndefined();
    const events = await t.call('POST', `/webhookEndpoint/${created.id}`, {
      body: { eventTypes: ['shift.published', 'punch.created'] },
    });
    expect(events.body.enabledEvents).toEqual(['shift.published', 'punch.created']);
  });

  it('disables and re-enables through update', async () => {
    const { body: created } = await create({ url: 'https://example.com/h', enabledEvents: ['*'] });
    expect((await t.call('POST', `/webhookEndpoint/${created.id}`, { body: { status: 'disabled' } })).body.status).toBe(
      'disabled',
    );
    expect((await t.call('GET', `/webhookEndpoint/${created.id}`)).body.status).toBe('disabled');
    expect((await t.call('POST', `/webhookEndpoint/${created.id}`, { body: { status: 'enabled' } })).body.status).toBe(
      'enabled',
    );
    const bad = await t.call('POST', `/webhookEndpoint/${created.id}`, { body: { status: 'paused' } });
    expect(bad.body.error).toMatchObject({ code: 'parameter_invalid', param: 'status' });
  });

  it('deletes, answering the DESIGN.md deleted object, then 404s', async () => {
    const { body: created } = await create({ url: 'https://example.com/h', enabledEvents: ['*'] });
    const res = await t.call('DELETE', `/webhookEndpoint/${created.id}`);
    expect(res).toMatchObject({ status: 200, body: { id: created.id, object: 'webhook_endpoint', deleted: true } });
    expect((await t.call('GET', `/webhookEndpoint/${created.id}`)).status).toBe(404);
    expect((await t.call('DELETE', `/webhookEndpoint/${created.id}`)).status).toBe(404);
  });

  it("answers 404 resource_not_found for unknown ids and another account's ids", async () => {
    const { body: created } = await create({ url: 'https://example.com/h', enabledEvents: ['*'] });
    const other = await t.call('POST', '/sandbox/keys', { body: {} });
    for (const [method, path] of [
      ['GET', `/webhookEndpoint/${created.id}`],
      ['POST', `/webhookEndpoint/${created.id}`],
      ['DELETE', `/webhookEndpoint/${created.id}`],
      ['POST', `/webhookEndpoint/${created.id}/ping`],
    ]) {
      const res = await t.call(method, path, { key: other.body.apiKey, body: method === 'POST' ? {} : undefined });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code: 'resource_not_found' });
    }
    expect((await t.call('GET', '/webhookEndpoint/999')).status).toBe(404);
    expect((await t.call('GET', '/webhookEndpoint/abc')).status).toBe(404);
    expect((await t.call('GET', '/webhookEndpoint')).body.data).toHaveLength(1);
    expect((await t.call('GET', '/webhookEndpoint', { key: other.body.apiKey })).body.data).toHaveLength(0);
  });

  it('answers 409 idempotency_conflict to the same url twice in one account', async () => {
    await create({ url: 'https://example.com/h', enabledEvents: ['*'] });
    const res = await create({ url: 'https://example.com/h', enabledEvents: ['punch.created'] });
    expect(res.status).toBe(409);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code: 'idempotency_conflict' });
    const other = await t.call('POST', '/sandbox/keys', { body: {} });
    expect((await create({ url: 'https://example.com/h', enabledEvents: ['*'] }, other.body.apiKey)).status).toBe(201);
  });

  it('refuses the 17th endpoint with 400 endpoint_limit_reached', async () => {
    for (let i = 1; i <= 16; i++)
      expect((await create({ url: `https://example.com/${i}`, enabledEvents: ['*'] })).status).toBe(201);
    const res = await create({ url: 'https://example.com/17', enabledEvents: ['*'] });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code: 'endpoint_limit_reached' });
  });

  it('lists newest first in the DESIGN.md wrapper, paging with limit and cursor', async () => {
    for (let i = 1; i <= 5; i++) await create({ url: `https://example.com/${i}`, enabledEvents: ['*'] });
    const first = await t.call('GET', '/webhookEndpoint?limit=2');
    expect(first.body).toMatchObject({ object: 'list', hasMore: true });
    expect(first.body.data.map((e: { url: string }) => e.url)).toEqual([
      'https://example.com/5',
      'https://example.com/4',
    ]);
    const second = await t.call('GET', `/webhookEndpoint?limit=2&cursor=${first.body.nextCursor}`);
    expect(second.body.data.map((e: { url: string }) => e.url)).toEqual([
      'https://example.com/3',
      'https://example.com/2',
    ]);
    const third = await t.call('GET', `/webhookEndpoint?limit=2&cursor=${second.body.nextCursor}`);
    expect(third.body).toMatchObject({ hasMore: false, nextCursor: null });
    expect(third.body.data).toHaveLength(1);
    expect((await t.call('GET', '/webhookEndpoint')).body.data).toHaveLength(5);
    expect((await t.call('GET', '/webhookEndpoint?limit=101')).body.error.param).toBe('limit');
    expect((await t.call('GET', '/webhookEndpoint?cursor=zzz')).body.error.param).toBe('cursor');
  });
});
