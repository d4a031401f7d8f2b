import { rm } from 'node:fs/promises';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/api/index.js';
import { startInspector } from '../../src/inspector/index.js';
import { signPayload } from '../../src/contract/index.js';
import { INLINE_BODY_CHARS } from '../../src/store/index.js';
import { connectClient, handshakeStatus, startInspectedSession } from '../helpers/inspector.js';
import { post } from '../helpers/listen.js';
import { answer200 } from '../helpers/receiver.js';
import { envelopeBody } from '../helpers/delivery.js';

let t: Awaited<ReturnType<typeof startInspectedSession>>;
let api: ApiClient;

beforeAll(async () => {
  t = await startInspectedSession();
  api = t.session.client as ApiClient;
});
afterAll(() => t.close());

const emit = (type: string) => api.request<{ id: string }>('POST', '/sandbox/events', { body: { type } });

function httpGet(url: string, headers: Record<string, string> = {}) {
  return new Promise<{ status: number; headers: Record<string, unknown>; body: string }>((resolve, reject) => {
    const u = new URL(url);
    // A raw path: fetch and URL would normalize /../ away before it left the client.
    const req = request({ host: u.hostname, port: u.port, path: url.slice(url.indexOf('/', 8)), headers }, (res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('inspector handshake', () => {
  it('refuses a missing or wrong token with 401', async () => {
    const base = `ws://${t.inspectorUrl.host}/ws`;
    expect(await handshakeStatus(base)).toBe(401);
    expect(await handshakeStatus(`${base}?token=${'x'.repeat(t.token.length)}`)).toBe(401);
    expect(await handshakeStatus(`${base}?token=${t.token.slice(0, -1)}`)).toBe(401);
  });

  it('refuses a foreign Origin with 403 (cross-site WebSocket hijacking)', async () => {
    expect(await handshakeStatus(t.wsUrl, { origin: 'https://evil.example' })).toBe(403);
    expect(await handshakeStatus(t.wsUrl, { origin: `http://127.0.0.1:${Number(t.inspectorUrl.port) + 1}` })).toBe(403);
    expect(await handshakeStatus(t.wsUrl, { origin: 'null' })).toBe(403);
  });

  it('accepts its own Origin and no Origin at all (scripts)', async () => {
    expect(await handshakeStatus(t.wsUrl, { origin: `http://${t.inspectorUrl.host}` })).toBe(101);
    expect(await handshakeStatus(t.wsUrl)).toBe(101);
  });

  it('refuses a Host that is not its loopback address and port (DNS rebinding)', async () => {
    expect(await handshakeStatus(t.wsUrl, { host: `evil.example:${t.inspectorUrl.port}` })).toBe(403);
    expect(await handshakeStatus(t.wsUrl, { host: '127.0.0.1:80' })).toBe(403);
  });

  it("binds 127.0.0.1 only, on its own port, not the listener's", () => {
    expect(t.inspectorUrl.hostname).toBe('127.0.0.1');
    expect(t.inspectorUrl.port).not.toBe(new URL(t.session.ready.listener).port);
  });
});

describe('inspector page server', () => {
  it('serves the page with a CSP that forbids inline script, and no CORS headers', async () => {
    const res = await httpGet(`http://${t.inspectorUrl.host}/`);
    expect(res.status).toBe(200);
    const csp = String(res.headers['content-security-policy']);
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    expect(res.body).toContain('<script type="module" src="/app.js">');
  });

  it.each([
    '/../package.json',
    '/..%2fpackage.json',
    '/%2e%2e/package.json',
    '/ui/../package.json',
    '//etc/passwd',
    '/app.js/..',
  ])('refuses path traversal %s', async (path) => {
    const res = await httpGet(`http://${t.inspectorUrl.host}${path}`);
    expect(res.status).toBe(404);
    expect(res.body).not.toContain('"name": "clockhook"');
  });

  it('refuses a foreign Host on plain HTTP too', async () => {
    expect((await httpGet(`http://${t.inspectorUrl.host}/`, { host: 'evil.example' })).status).toBe(403);
  });
});

describe('inspector protocol', () => {
  it('sends a snapshot on connect, then each new capture and its update', async () => {
    const client = await connectClient(t.wsUrl);
    const snapshot = await client.waitFor((m) => m.type === 'snapshot');
    expect(snapshot).toMatchObject({
      mode: 'sandbox',
      forwardTo: `${t.app.url}/`,
      endpoint: { id: t.session.ready.endpointId, status: 'enabled' },
    });
    expect(snapshot.endpoint.secret).toBeUndefined();
    expect(snapshot.endpoint.secretHint).toMatch(/^whsec_…/);
    const event = await emit('punch.created');
    const forwarded = await client.waitFor(
      (m) => m.type === 'capture' && m.capture.envelope?.id === event.id && m.capture.forward,
    );
    expect(forwarded.capture.forward.statusCode).toBe(200);
    // Each message carries the capture's latest state; changes within 20 ms go out once.
    expect(
      client.messages.filter((m) => m.type === 'capture' && m.capture.envelope?.id === event.id).length,
    ).toBeLessThanOrEqual(2);
    client.close();
  });

  it('replays re-signed, as-is, and with an edited body', async () => {
    const client = await connectClient(t.wsUrl);
    const event = await emit('shift.published');
    const original = await client.waitFor(
      (m) => m.type === 'capture' && m.capture.envelope?.id === event.id && m.capture.forward,
    );
    const before = t.app.received.length;

    const resigned = await client.act({ type: 'replay', captureId: original.capture.id, mode: 'resign' });
    expect(resigned).toMatchObject({ ok: true, data: { statusCode: 200, captureId: expect.stringMatching(/^cap_/) } });
    const replay = await client.waitFor(
      (m) => m.type === 'capture' && m.capture.id === resigned.data.captureId && m.capture.forward,
    );
    expect(replay.capture).toMatchObject({
      source: 'replay',
      replayOf: original.capture.id,
      signature: { status: 'valid' },
    });
    expect(t.app.received[before].body.toString()).toBe(original.capture.body);
    const resignedHeader = String(t.app.received[before].headers['x-service-signature']);
    expect(Number(/t=(\d+)/.exec(resignedHeader)?.[1])).toBeGreaterThanOrEqual(original.capture.signature.timestamp);
    expect(t.app.received[before].headers['x-clockhook-replay']).toBeUndefined();

    const asis = await client.act({ type: 'replay', captureId: original.capture.id, mode: 'asis' });
    expect(asis.ok).toBe(true);
    expect(t.app.received[before + 1].headers['x-service-signature']).toBe(
      original.capture.headers['x-service-signature'],
    );

    const edited = await client.act({
      type: 'replay',
      captureId: original.capture.id,
      mode: 'resign',
      body: '{"edited":true}',
    });
    expect(edited.ok).toBe(true);
    expect(t.app.received[before + 2].body.toString()).toBe('{"edited":true}');

    const bad = await client.act({ type: 'replay', captureId: 'cap_nope', mode: 'resign' });
    expect(bad).toMatchObject({ ok: false, error: { code: 'capture_not_found' } });
    client.close();
  });

  it('pings the endpoint and redelivers an event, which arrives with the same id', async () => {
    const client = await connectClient(t.wsUrl);
    const ping = await client.act({ type: 'ping' });
    expect(ping).toMatchObject({
      ok: true,
      data: { object: 'webhook_endpoint_ping', endpointId: t.session.ready.endpointId },
    });
    await client.waitFor((m) => m.type === 'capture' && m.capture.envelope?.id === ping.data.eventId);

    const event = await emit('employee.updated');
    await client.waitFor((m) => m.type === 'capture' && m.capture.envelope?.id === event.id);
    const redelivered = await client.act({ type: 'redeliver', eventId: event.id });
    expect(redelivered).toMatchObject({ ok: true, data: { eventId: event.id, endpointsNotified: 1 } });
    const again = await client.waitFor(
      (m) => m.type === 'capture' && m.capture.envelope?.id === event.id && m.capture.duplicateOf,
    );
    expect(again.capture.source).toBe('delivery');

    const synthetic = await client.act({ type: 'redeliver', eventId: ping.data.eventId });
    expect(synthetic).toMatchObject({
      ok: false,
      error: {
        type: 'invalid_request_error',
        code: 'cannot_redeliver_synthetic_event',
        requestId: expect.stringMatching(/^req_/),
      },
    });

    const attempts = await client.act({ type: 'attempts', eventId: event.id });
    expect(attempts.ok).toBe(true);
    expect(attempts.data.delivery_attempts.length).toBeGreaterThanOrEqual(1);
    client.close();
  });

  it('gives, with the attempts, when the service tries a failed delivery again', async () => {
    t.app.setResponder((_r, res) => res.writeHead(500).end('boom'));
    const client = await connectClient(t.wsUrl);
    try {
      const event = await emit('employee.updated');
      const attempts = async () => (await client.act({ type: 'attempts', eventId: event.id })).data;
      await expect.poll(async () => (await attempts()).delivery_attempts.length, { timeout: 10_000 }).toBe(1);
      const {
        delivery_attempts: [attempt],
        outlook,
      } = await attempts();
      // The embedded sandbox keeps the contract's times: attempt 2 comes 1 minute after the first.
      expect(outlook).toEqual([
        {
          endpointId: t.session.ready.endpointId,
          next: 'attempt',
          attempt: 2,
          after: 1,
          delayMs: 60_000,
          dueAt: Date.parse(attempt.createdAt) + 60_000,
          // In the story's words, the page putting its local time where {at} stands.
          words: {
            text: `Endpoint ${t.session.ready.endpointId}: attempt 2 of 5 is due at about {at}, 1 min after attempt 1 (the service's retry policy).`,
            due: `Endpoint ${t.session.ready.endpointId}: attempt 2 of 5 was due at about {at}, 1 min after attempt 1 (the service's retry policy); it shows here once it completes.`,
          },
        },
      ]);
    } finally {
      client.close();
      t.app.setResponder(answer200);
    }
  });

  it('re-enables a disabled endpoint and tells every page', async () => {
    const id = t.session.ready.endpointId as number;
    await api.updateEndpoint(id, { status: 'disabled' });
    const client = await connectClient(t.wsUrl);
    const other = await connectClient(t.wsUrl);
    const result = await client.act({ type: 'enable-endpoint' });
    expect(result).toMatchObject({ ok: true, data: { id, status: 'enabled' } });
    await other.waitFor((m) => m.type === 'endpoint' && m.endpoint.status === 'enabled');
    expect((await api.getEndpoint(id)).status).toBe('enabled');
    client.close();
    other.close();
  });

  it('sends the beginning of a large body with the capture and the whole of it on request; replays all of it', async () => {
    const client = await connectClient(t.wsUrl);
    await client.waitFor((m) => m.type === 'snapshot');
    const body = envelopeBody('evt_large', { data: { note: 'L'.repeat(3 * 1024 * 1024) } });
    const signature = signPayload({ payload: body, secret: t.session.secret as string });
    expect((await post(t.session.ready.listener, body, { 'x-service-signature': signature })).status).toBe(200);
    const live = await client.waitFor(
      (m) => m.type === 'capture' && m.capture.envelope?.id === 'evt_large' && m.capture.forward,
    );
    expect(live.capture).toMatchObject({
      bodySize: body.length,
      bodyFile: `captures.json.bodies/${live.capture.id}`,
      body: body.slice(0, INLINE_BODY_CHARS),
    });

    const whole = await client.act({ type: 'body', captureId: live.capture.id });
    expect(whole).toMatchObject({ ok: true, data: { captureId: live.capture.id, bodyEncoding: 'utf8' } });
    expect(whole.data.body).toBe(body);

    const before = t.app.received.length;
    expect((await client.act({ type: 'replay', captureId: live.capture.id, mode: 'asis' })).ok).toBe(true);
    expect(t.app.received[before].body.toString()).toBe(body);
    expect(t.app.received[before].headers['x-service-signature']).toBe(signature);

    // A page that connects now gets the beginning only: 200 such captures used to make a snapshot
    // longer than V8's largest string, and the listener crashed when the page connected.
    const late = await connectClient(t.wsUrl);
    const snapshot = await late.waitFor((m) => m.type === 'snapshot');
    expect(snapshot.captures.find((c: { id: string }) => c.id === live.capture.id).body).toHaveLength(
      INLINE_BODY_CHARS,
    );
    expect(late.raw[0].length).toBeLessThan(200 * 1024);
    expect(await client.act({ type: 'body', captureId: 'cap_nope' })).toMatchObject({
      ok: false,
      error: { code: 'capture_not_found' },
    });

    // Its file gone: nothing is replayed (not the 16 KiB kept in the store), and the page is told why.
    await rm(`${t.dir}/.clockhook/${live.capture.bodyFile}`);
    const sent = t.app.received.length;
    const replay = await client.act({ type: 'replay', captureId: live.capture.id, mode: 'resign' });
    expect(replay).toMatchObject({
      ok: false,
      error: { code: 'body_unavailable', message: expect.stringContaining('Nothing was replayed') },
    });
    expect(t.app.received.length).toBe(sent);
    expect(await client.act({ type: 'body', captureId: live.capture.id })).toMatchObject({
      ok: false,
      error: { code: 'body_unavailable' },
    });
    late.close();
    client.close();
  });

  it('pins, pages history, and clears all but pinned captures', async () => {
    const client = await connectClient(t.wsUrl);
    const snapshot = await client.waitFor((m) => m.type === 'snapshot');
    const keep = snapshot.captures[0];
    expect((await client.act({ type: 'pin', captureId: keep.id })).ok).toBe(true);
    client.socket.send(JSON.stringify({ type: 'history', before: keep.id }));
    const history = await client.waitFor((m) => m.type === 'history');
    expect(history.captures.every((c: { id: string }) => c.id < keep.id)).toBe(true);
    const cleared = await client.act({ type: 'clear' });
    expect(cleared.ok).toBe(true);
    const after = await client.waitFor((m) => m.type === 'snapshot' && m.captures.length === 1);
    expect(after.captures[0].id).toBe(keep.id);
    client.close();
  });

  it('answers unknown or malformed messages with an error result', async () => {
    const client = await connectClient(t.wsUrl);
    expect(await client.act({ type: 'format-disk' })).toMatchObject({ ok: false, error: { code: 'unknown_action' } });
    expect(await client.act({ type: 'search', query: '  ' })).toMatchObject({
      ok: false,
      error: { code: 'parameter_invalid', message: 'query must hold something to search for.' },
    });
    client.socket.send('not json');
    await client.waitFor((m) => m.type === 'result' && m.id === null && m.error.code === 'parameter_invalid');
    client.close();
  });

  it('passes an API 401 through as an error result with its code and requestId', async () => {
    const inspector = await startInspector({
      port: 0,
      tokenPath: `${t.dir}/other-token`,
      store: t.session.store,
      listener: t.session.listener,
      client: new ApiClient({ baseUrl: t.session.ready.apiBase as string, apiKey: 'tt_live_revoked' }),
      mode: 'api',
      forwardTo: null,
      secretHint: null,
      getEndpoint: () => t.session.endpoint,
      setEndpoint: () => {},
    });
    const url = new URL(inspector.url);
    const client = await connectClient(`ws://${url.host}/ws?token=${url.searchParams.get('token')}`);
    const result = await client.act({ type: 'attempts', eventId: 'evt_x' });
    expect(result).toMatchObject({
      ok: false,
      error: { type: 'authentication_error', code: 'api_key_invalid', requestId: expect.stringMatching(/^req_/) },
    });
    client.close();
    await inspector.close();
    await inspector.close();
  });

  it('never sends the API key or the endpoint secret to a page', async () => {
    const client = await connectClient(t.wsUrl);
    await client.waitFor((m) => m.type === 'snapshot');
    await client.act({ type: 'ping' });
    await client.act({ type: 'attempts', eventId: (await emit('punch.deleted')).id });
    const { readFile } = await import('node:fs/promises');
    const [record] = JSON.parse(await readFile(`${t.dir}/.clockhook/endpoints.json`, 'utf8'));
    const everything = client.raw.join('\n');
    expect(everything).not.toContain(record.secret);
    const { apiKey } = JSON.parse(await readFile(`${t.dir}/.clockhook/sandbox.json`, 'utf8'));
    expect(apiKey).toMatch(/^tt_live_/);
    expect(everything).not.toContain(apiKey);
    client.close();
  });

  it('keeps the token across restarts (the page reconnects)', async () => {
    const { readFile } = await import('node:fs/promises');
    expect((await readFile(`${t.dir}/.clockhook/inspector-token`, 'utf8')).trim()).toBe(t.token);
  });
});
