import { getEventListeners } from 'node:events';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ApiClient, ApiError } from '../src/index.js';
import { type ScriptedReply, startScriptedServer } from './helpers/scripted-server.js';

const KEY = 'tt_live_testkey';
let closeServer: (() => Promise<void>) | undefined;

afterEach(async () => {
  await closeServer?.();
  closeServer = undefined;
});

async function clientFor(replies: ScriptedReply[]) {
  const server = await startScriptedServer(replies);
  closeServer = server.close;
  const waits: number[] = [];
  const client = new ApiClient({
    baseUrl: server.url,
    apiKey: KEY,
    sleep: async (ms) => {
      waits.push(ms);
    },
  });
  return { client, waits, requests: server.requests };
}

const envelope = (status: number, type: string, code: string, extra: Record<string, unknown> = {}): ScriptedReply => ({
  status,
  body: { error: { type, code, message: `${code} happened`, requestId: `req_${status}`, ...extra } },
});

describe('ApiClient', () => {
  it('sends the bearer key and parses the body', async () => {
    const { client, requests } = await clientFor([
      { status: 200, body: { id: 7, url: 'https://x', enabledEvents: ['*'], status: 'enabled' } },
    ]);
    const endpoint = await client.getEndpoint(7);
    expect(endpoint.id).toBe(7);
    expect(requests[0].headers.authorization).toBe(`Bearer ${KEY}`);
    expect(requests[0].url).toBe('/webhookEndpoint/7');
  });

  it('waits Retry-After on a 429, then succeeds', async () => {
    const { client, waits, requests } = await clientFor([
      { ...envelope(429, 'rate_limit_error', 'rate_limit_exceeded'), headers: { 'retry-after': '3' } },
      { status: 200, body: { data: [], hasMore: false, nextCursor: null } },
    ]);
    await client.listEndpoints();
    expect(waits).toEqual([3000]);
    expect(requests).toHaveLength(2);
  });

  it('backs off exponentially on repeated 429s', async () => {
    const limited = {
      ...envelope(429, 'rate_limit_error', 'account_rate_limit_exceeded'),
      headers: { 'retry-after': '2' },
    };
    const { client, waits } = await clientFor([limited, limited, limited, { status: 200, body: [] }]);
    await client.listEvents();
    expect(waits).toEqual([2000, 4000, 8000]);
  });

  it('never retries the trial caps', async () => {
    for (const code of [
      'trial_resource_limit_exceeded',
      'trial_resource_daily_limit_exceeded',
      'trial_daily_writes_exceeded',
    ]) {
      const { client, waits, requests } = await clientFor([
        { ...envelope(429, 'rate_limit_error', code), headers: { 'retry-after': '1' } },
      ]);
      const error = await client.createEndpoint({ url: 'https://x', enabledEvents: ['*'] }).catch((e) => e);
      expect(error).toBeInstanceOf(ApiError);
      expect(error.code).toBe(code);
      expect(waits).toEqual([]);
      expect(requests).toHaveLength(1);
      await closeServer?.();
    }
  });

  it('retries api_error 500 after 1, 2 and 4 s, then gives up', async () => {
    const fail = envelope(500, 'api_error', 'internal_error');
    const { client, waits, requests } = await clientFor([fail, fail, fail, fail]);
    const error = await client.listEvents().catch((e) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 500, type: 'api_error', code: 'internal_error', requestId: 'req_500' });
    expect(waits).toEqual([1000, 2000, 4000]);
    expect(requests).toHaveLength(4);
  });

  it('succeeds after 500 ×3 when the fourth answer is good', async () => {
    const fail = envelope(500, 'api_error', 'internal_error');
    const { client, waits } = await clientFor([
      fail,
      fail,
      fail,
      { status: 200, body: { id: 'evt_1', type: 'punch.created' } },
    ]);
    const event = await client.getEvent('evt_1');
    expect(event.id).toBe('evt_1');
    expect(event.delivery_attempts).toEqual([]);
    expect(waits).toEqual([1000, 2000, 4000]);
  });

  it('does not retry a 401 and carries the envelope fields', async () => {
    const { client, waits, requests } = await clientFor([envelope(401, 'authentication_error', 'api_key_invalid')]);
    const error = await client.listEndpoints().catch((e) => e);
    expect(error).toMatchObject({
      status: 401,
      type: 'authentication_error',
      code: 'api_key_invalid',
      message: 'api_key_invalid happened',
    });
    expect(error.describe()).toContain('[GET]');
    expect(error.describe()).toContain('req_401');
    expect(waits).toEqual([]);
    expect(requests).toHaveLength(1);
  });

  it('says which commands free an endpoint when the account holds its most', async () => {
    const { client } = await clientFor([envelope(400, 'invalid_request_error', 'endpoint_limit_reached')]);
    const error = await client.createEndpoint({ url: 'https://example.com/h', enabledEvents: ['*'] }).catch((e) => e);
    expect(error.describe()).toContain(
      '"npx clockhook endpoints list" shows them, with the URL each was made for; "npx clockhook endpoints delete <id>" deletes one',
    );
  });

  it('keeps param and per-field errors of a validation failure', async () => {
    const { client } = await clientFor([
      envelope(400, 'invalid_request_error', 'parameter_invalid', {
        param: 'url',
        errors: [{ field: 'url', message: 'must be https' }],
      }),
    ]);
    const error = await client.createEndpoint({ url: 'http://x', enabledEvents: ['*'] }).catch((e) => e);
    expect(error.param).toBe('url');
    expect(error.errors).toEqual([{ field: 'url', message: 'must be https' }]);
    expect(error.describe()).toContain('- url: must be https');
  });

  it('turns a 502 HTML page into an ApiError after retrying it', async () => {
    const page: ScriptedReply = {
      status: 502,
      body: '<html><body>Bad Gateway</body></html>',
      headers: { 'content-type': 'text/html' },
    };
    const { client, waits } = await clientFor([page, page, page, page]);
    const error = await client.listEndpoints().catch((e) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error.status).toBe(502);
    expect(error.message).toMatch(/without the service's JSON error body/);
    expect(error.message).toContain('Bad Gateway');
    expect(waits).toEqual([1000, 2000, 4000]);
  });

  it('sends one Idempotency-Key per logical write, the same on every retry', async () => {
    const fail = envelope(500, 'api_error', 'internal_error');
    const { client, requests } = await clientFor([
      fail,
      { status: 202, body: { eventId: 'evt_1', endpointsNotified: 1 } },
    ]);
    await client.redeliverEvent('evt_1');
    await client.redeliverEvent('evt_1');
    const keys = requests.map((r) => r.headers['idempotency-key']);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[1]).toBe(keys[0]);
    expect(keys[2]).not.toBe(keys[0]);
  });

  it('retries a write after a network error because it carries an Idempotency-Key', async () => {
    const { client, waits, requests } = await clientFor([
      { status: 0, hangUp: true },
      { status: 202, body: { eventId: 'evt_2' } },
    ]);
    const ack = await client.pingEndpoint(3);
    expect(ack.eventId).toBe('evt_2');
    expect(waits).toEqual([1000]);
    expect(requests[0].headers['idempotency-key']).toBe(requests[1].headers['idempotency-key']);
  });

  it('reports an unreachable service as connection_failed naming the URL', async () => {
    const { client, waits } = await clientFor([]);
    await closeServer?.();
    closeServer = undefined;
    const error = await client.listEndpoints().catch((e) => e);
    expect(error).toMatchObject({ status: 0, code: 'connection_failed' });
    expect(error.message).toContain(client.baseUrl);
    expect(waits).toEqual([1000, 2000, 4000]);
  });

  it('accepts eventTypes as the subscription field and a bare-array list', async () => {
    const { client } = await clientFor([
      { status: 200, body: [{ id: 1, url: 'https://a', eventTypes: ['punch.created'], status: 'enabled' }] },
    ]);
    const page = await client.listEndpoints();
    expect(page).toEqual({
      data: [{ id: 1, url: 'https://a', enabledEvents: ['punch.created'], status: 'enabled' }],
      hasMore: false,
      nextCursor: null,
    });
  });

  it("reads a list's paging in camelCase, the design's names, or snake_case", async () => {
    const { client } = await clientFor([
      { status: 200, body: { object: 'list', data: [], hasMore: true, nextCursor: 'c_camel' } },
      { status: 200, body: { object: 'list', data: [], has_more: true, next_cursor: 'c_snake' } },
    ]);
    expect(await client.listEvents()).toEqual({ data: [], hasMore: true, nextCursor: 'c_camel' });
    expect(await client.listEvents()).toEqual({ data: [], hasMore: true, nextCursor: 'c_snake' });
  });

  it('reads a limit over 100 a page at a time, following nextCursor, and stops where the list or the limit ends', async () => {
    const events = (from: number, n: number) =>
      Array.from({ length: n }, (_, i) => ({ id: `evt_${from + i}`, type: 'punch.created', delivery_attempts: [] }));
    const { client, requests } = await clientFor([
      { status: 200, body: { object: 'list', data: events(0, 100), hasMore: true, nextCursor: 'c1' } },
      { status: 200, body: { object: 'list', data: events(100, 100), hasMore: true, nextCursor: 'c2' } },
      { status: 200, body: { object: 'list', data: events(200, 50), hasMore: true, nextCursor: 'c3' } },
      // The whole list, shorter than the limit.
      { status: 200, body: { object: 'list', data: events(0, 100), hasMore: true, nextCursor: 'c1' } },
      { status: 200, body: { object: 'list', data: events(100, 7), hasMore: false, nextCursor: null } },
      // A service that says there is more but gives nothing, then one that gives its own cursor back.
      { status: 200, body: { object: 'list', data: [], hasMore: true, nextCursor: 'c9' } },
      { status: 200, body: { object: 'list', data: events(0, 100), hasMore: true, nextCursor: 'c1' } },
      { status: 200, body: { object: 'list', data: events(100, 100), hasMore: true, nextCursor: 'c1' } },
    ]);
    const page = await client.listEvents({ type: 'punch.created', limit: 250 });
    expect(page.data.map((e) => e.id)).toEqual(events(0, 250).map((e) => e.id));
    expect(page).toMatchObject({ hasMore: true, nextCursor: 'c3' });
    expect(requests.map((r) => r.url)).toEqual([
      '/event?type=punch.created&limit=100',
      '/event?type=punch.created&limit=100&cursor=c1',
      '/event?type=punch.created&limit=50&cursor=c2',
    ]);

    const all = await client.listEvents({ limit: Number.POSITIVE_INFINITY });
    expect(all).toMatchObject({ hasMore: false, nextCursor: null });
    expect(all.data).toHaveLength(107);
    expect(requests.slice(3).map((r) => r.url)).toEqual(['/event?limit=100', '/event?limit=100&cursor=c1']);

    expect((await client.listEvents({ limit: 300 })).data).toEqual([]);
    expect((await client.listEvents({ limit: 300, cursor: 'c0' })).data).toHaveLength(200);
    expect(requests.slice(5).map((r) => r.url)).toEqual([
      '/event?limit=100',
      '/event?limit=100&cursor=c0',
      '/event?limit=100&cursor=c1',
    ]);
  });

  it("reads an event's delivery attempts in camelCase or snake_case, whose names the contract does not show", async () => {
    const camel = {
      attempt: 1,
      endpointId: 3,
      statusCode: 502,
      durationMs: 41,
      responseBody: 'Bad Gateway',
      error: null,
      createdAt: '2026-11-22T10:00:00.000Z',
    };
    const snake = {
      attempt_number: 1,
      endpoint_id: 3,
      status_code: 502,
      duration_ms: 41,
      response_body: 'Bad Gateway',
      error: null,
      created_at: 1795341600,
    };
    const { client } = await clientFor([
      {
        status: 200,
        body: {
          id: 'evt_1',
          type: 'punch.created',
          delivery_attempts: [camel, snake, { endpoint: { id: 7, url: 'https://x' }, error_message: 'timed out' }],
        },
      },
      { status: 200, body: { data: [{ id: 'evt_2', type: 'punch.created' }] } },
    ]);
    const [a, b, c] = (await client.getEvent('evt_1')).delivery_attempts;
    expect(a).toEqual(camel);
    expect(b).toMatchObject(camel);
    expect(c).toMatchObject({
      endpointId: 7,
      statusCode: null,
      error: 'timed out',
      responseBody: '',
      durationMs: undefined,
      createdAt: undefined,
    });
    // A freshly queued event may come without the list at all.
    expect((await client.listEvents()).data[0].delivery_attempts).toEqual([]);
  });

  it('ends a call and its retries when its signal aborts', async () => {
    const controller = new AbortController();
    const server = await startScriptedServer([
      { status: 0, hangUp: true },
      { status: 0, hangUp: true },
    ]);
    closeServer = server.close;
    // Aborted while it waits to retry: no second request.
    const client = new ApiClient({ baseUrl: server.url, apiKey: KEY, sleep: async () => controller.abort() });
    await expect(client.getEndpoint(1, { signal: controller.signal })).rejects.toMatchObject({ name: 'AbortError' });
    expect(server.requests).toHaveLength(1);
  });

  it('gives up on an answer that never comes at its time limit', async () => {
    const server = await startScriptedServer([{ status: 0, silent: true }]);
    closeServer = server.close;
    const client = new ApiClient({ baseUrl: server.url, apiKey: KEY, timeoutMs: 100, maxServerRetries: 0 });
    await expect(client.getEndpoint(1)).rejects.toMatchObject({
      code: 'connection_failed',
      message: `No response from ${server.url}/webhookEndpoint/1: timed out`,
    });
  });

  it('ends a call in flight when its signal aborts, and leaves nothing listening on the signal', async () => {
    const server = await startScriptedServer([
      { status: 200, body: { id: 1 } },
      { status: 0, silent: true },
    ]);
    closeServer = server.close;
    const client = new ApiClient({ baseUrl: server.url, apiKey: KEY });
    // One signal for many calls, as listen's endpoint watch keeps one for as long as it runs.
    const controller = new AbortController();
    await client.getEndpoint(1, { signal: controller.signal });
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    const call = client.getEndpoint(1, { signal: controller.signal });
    await vi.waitFor(() => expect(server.requests).toHaveLength(2));
    controller.abort();
    await expect(call).rejects.toMatchObject({ name: 'AbortError' });
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('says why fetch would not even try a port browsers block', async () => {
    // A base on such a port is refused when the client is made; a redirect can still lead to one.
    expect(() => new ApiClient({ baseUrl: 'http://127.0.0.1:6000', apiKey: KEY })).toThrow(
      new TypeError(
        'ApiClient: baseUrl "http://127.0.0.1:6000" is on port 6000, which fetch refuses to connect to (the Fetch standard blocks it, with 9, 6667 and others); use e.g. https://api.example.com',
      ),
    );
    const server = await startScriptedServer([
      { status: 307, headers: { location: 'http://127.0.0.1:6000/webhookEndpoint/1' } },
    ]);
    closeServer = server.close;
    const client = new ApiClient({ baseUrl: server.url, apiKey: KEY, maxServerRetries: 0 });
    await expect(client.getEndpoint(1)).rejects.toMatchObject({
      code: 'connection_failed',
      message: `No response from ${server.url}/webhookEndpoint/1: fetch refuses to connect to that port (one browsers block, such as 9, 6000 or 6667); run it on another port`,
    });
  });

  it('refuses to be built without a base URL or key', () => {
    expect(() => new ApiClient({ baseUrl: '', apiKey: KEY })).toThrow(/baseUrl is required/);
    expect(() => new ApiClient({ baseUrl: 'nope', apiKey: KEY })).toThrow(/not a URL/);
    // Its paths are appended to the base: another scheme, a query or a fragment would send them nowhere.
    expect(() => new ApiClient({ baseUrl: 'ftp://api.example.com', apiKey: KEY })).toThrow(
      new TypeError(
        'ApiClient: baseUrl "ftp://api.example.com" is not an http(s) URL; use e.g. https://api.example.com',
      ),
    );
    expect(() => new ApiClient({ baseUrl: 'https://api.example.com/?v=1', apiKey: KEY })).toThrow(
      new TypeError(
        'ApiClient: baseUrl "https://api.example.com/?v=1" has a query or fragment; use e.g. https://api.example.com',
      ),
    );
    expect(() => new ApiClient({ baseUrl: 'http://x', apiKey: '' })).toThrow(/apiKey is required/);
  });
});
