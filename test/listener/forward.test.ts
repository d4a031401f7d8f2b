import { readFile } from 'node:fs/promises';
import { request } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { signPayload } from '../../src/contract/index.js';
import { answerExcerpt } from '../../src/shared/excerpt.js';
import { type DeliveryReport, Listener } from '../../src/listener/index.js';
import { CaptureStore } from '../../src/store/index.js';
import { outcomeOf } from '../../src/story/index.js';
import { post } from '../helpers/listen.js';
import { type ListenerRig, startListenerRig } from '../helpers/listener-rig.js';
import { answer200, type Responder } from '../helpers/receiver.js';
import { tempDir } from '../helpers/sandbox.js';
import { recordingLogger } from '../helpers/logger.js';
import { SECRET, envelopeBody } from '../helpers/delivery.js';

const delivery = (id: string) => {
  const body = envelopeBody(id, { data: { id: 1 } });
  return { body, headers: { 'x-service-signature': signPayload({ payload: body, secret: SECRET }) } };
};

let rig: ListenerRig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

/**
 * An app that closes a kept-alive connection just as the listener sends the next request on it: what
 * an app server's idle timeout does (uvicorn's 5 s, say) when a delivery arrives at that moment.
 */
function closingIdleConnections(times: number, holdMs = 0): Responder {
  const served = new WeakSet<Socket>();
  let dropped = 0;
  return (request, res, req) => {
    if (served.has(req.socket) && dropped < times) {
      dropped += 1;
      req.socket.destroy();
      return;
    }
    served.add(req.socket);
    setTimeout(() => answer200(request, res, req), holdMs);
  };
}

describe('forwarding over kept-alive connections', () => {
  it('sends a delivery again on a new connection when the app had closed the reused one, once per stale connection', async () => {
    rig = await startListenerRig({ secret: SECRET, respond: closingIdleConnections(1) });
    const first = delivery('evt_first');
    expect((await post(rig.listener.url, first.body, first.headers)).status).toBe(200);
    const second = delivery('evt_second');
    const answer = await post(rig.listener.url, second.body, second.headers);
    expect(answer.status).toBe(200);
    expect(answer.text).toBe('{"ok":true}');
    // The app saw the first, the one it dropped, and the second again, with its headers as before.
    const bodies = rig.app.received.map((r) => JSON.parse(r.body.toString()).id);
    expect(bodies).toEqual(['evt_first', 'evt_second', 'evt_second']);
    const [, dropped, resent] = rig.app.received;
    expect(resent.headers['x-forwarded-for']).toBe(dropped.headers['x-forwarded-for']);
    expect(resent.headers['x-forwarded-for']).toBe('127.0.0.1');
    expect(resent.headers['x-forwarded-proto']).toBe('http');
    const store = rig.store;
    await expect.poll(() => store.newest(10).map((c) => c.forward?.statusCode)).toEqual([200, 200]);
  });

  it('sends again on a new connection when every kept-alive one in the pool is closed (an app that restarted)', async () => {
    // Five deliveries at once leave five connections in the pool, and the app then closes each one used again.
    rig = await startListenerRig({ secret: SECRET, respond: closingIdleConnections(Infinity, 100) });
    const opening = ['evt_a', 'evt_b', 'evt_c', 'evt_d', 'evt_e'].map(delivery);
    expect(
      (await Promise.all(opening.map((d) => post(rig?.listener.url as string, d.body, d.headers)))).map(
        (a) => a.status,
      ),
    ).toEqual([200, 200, 200, 200, 200]);
    const last = delivery('evt_last');
    const answer = await post(rig.listener.url, last.body, last.headers);
    // Not on the next stale one of the pool, and the next: once, on a connection of its own.
    expect(answer.status).toBe(200);
    expect(rig.app.received.filter((r) => JSON.parse(r.body.toString()).id === 'evt_last')).toHaveLength(2);
  });

  it('answers 502 when the app resets a new connection: only a reused one is tried again', async () => {
    rig = await startListenerRig({ secret: SECRET, respond: (_request, _res, req) => req.socket.destroy() });
    const only = delivery('evt_only');
    const answer = await post(rig.listener.url, only.body, only.headers);
    expect(answer.status).toBe(502);
    expect(answer.text).toContain(
      'closed the connection without answering: it may have crashed handling this delivery',
    );
    expect(rig.app.received).toHaveLength(1);
  });

  it('passes a redirect back and says once why every such delivery fails, and where to forward instead', async () => {
    const logger = recordingLogger();
    const { warnings } = logger;
    rig = await startListenerRig({
      secret: SECRET,
      logger,
      targetPath: '/hooks',
      respond: (_request, res) => res.writeHead(308, { location: '/hooks/' }).end(),
    });
    for (const id of ['evt_r1', 'evt_r2']) {
      const sent = delivery(id);
      expect((await post(rig.listener.url, sent.body, sent.headers)).status).toBe(308);
    }
    expect(warnings).toEqual([
      `The app answered 308 to POST ${rig.app.url}/hooks, redirecting to ${rig.app.url}/hooks/. The service does not follow redirects: it counts each such delivery as failed and retries it. Forward to where it leads instead: --forward-to ${rig.app.url}/hooks/`,
    ]);
  });
});

describe('a request outside --path', () => {
  it('is answered 404 and not captured, and the first POST there is explained, once', async () => {
    const logger = recordingLogger();
    const { warnings } = logger;
    rig = await startListenerRig({ secret: SECRET, path: '/hooks', logger });
    const origin = new URL(rig.listener.url).origin;
    // A browser's GET is not a delivery gone astray: nothing said.
    expect((await fetch(`${origin}/favicon.ico`)).status).toBe(404);
    expect(warnings).toEqual([]);
    for (const path of ['/', '/other?x=1', '/']) {
      const sent = delivery('evt_astray');
      expect((await post(`${origin}${path}`, sent.body, sent.headers)).status).toBe(404);
    }
    expect(warnings).toEqual([
      'A POST to / was answered 404 and not captured: listen takes deliveries under /hooks only (--path). If the service sends them there, register its endpoint with the path /hooks, or give listen the --path of that URL. Further requests outside /hooks are not reported.',
    ]);
    expect(rig.store.all()).toEqual([]);
    const sent = delivery('evt_in_place');
    expect((await post(`${origin}/hooks`, sent.body, sent.headers)).status).toBe(200);
  });
});

describe("the excerpt of an app's answer on a delivery's line", () => {
  const excerpt = (body: string) =>
    answerExcerpt({
      target: 'http://localhost:3000/',
      statusCode: 400,
      headers: {},
      body,
      bodyEncoding: 'utf8',
      durationMs: 1,
    });

  it("reads a JSON error's message, an HTML page's title or stack, else the first line of text", () => {
    expect(excerpt('{"error":"No signatures found matching the expected signature for payload"}')).toBe(
      'No signatures found matching the expected signature for payload',
    );
    expect(excerpt('{"error":{"type":"invalid_request_error","message":"Invalid signature"}}')).toBe(
      'Invalid signature',
    );
    expect(excerpt('{"detail":"Not authenticated"}')).toBe('Not authenticated');
    expect(excerpt('{"ok":false}')).toBe('{"ok":false}');
    expect(excerpt('Webhook Error: Timestamp outside the tolerance zone\n    at verify (index.js:3)')).toBe(
      'Webhook Error: Timestamp outside the tolerance zone',
    );
    const express =
      '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>Error</title>\n</head>\n<body>\n<pre>TypeError: Cannot read properties of undefined (reading &#39;id&#39;)<br> &nbsp; &nbsp;at /app/index.js:10:5</pre>\n</body>\n</html>';
    expect(excerpt(express)).toBe("TypeError: Cannot read properties of undefined (reading 'id')");
    expect(excerpt('<html><head><title>KeyError at /hooks/</title></head><body>…</body></html>')).toBe(
      'KeyError at /hooks/',
    );
    expect(
      excerpt(
        '<html><body><h1>Internal Server Error</h1><p>The server encountered an internal error</p></body></html>',
      ),
    ).toBe('Internal Server Error');
  });

  it('is one short line a terminal cannot be driven by, and nothing for bytes or an empty answer', () => {
    expect(excerpt('x'.repeat(300))).toBe(`${'x'.repeat(99)}…`);
    expect(excerpt('evil \u001b[31mred\u001b[0m \u0007bell\u009b')).toBe('evil [31mred [0m bell');
    expect(excerpt('  \n ')).toBeNull();
    expect(
      answerExcerpt({
        target: 'http://localhost:3000/',
        statusCode: 400,
        headers: {},
        body: 'AAEC',
        bodyEncoding: 'base64',
        durationMs: 1,
      }),
    ).toBeNull();
  });

  it('comes with a delivery the app refused, and not with one it accepted', async () => {
    const reports: DeliveryReport[] = [];
    rig = await startListenerRig({
      secret: SECRET,
      onDelivery: (report) => reports.push(report),
      respond: (request, res, req) => {
        if (JSON.parse(request.body.toString()).id === 'evt_ok') return answer200(request, res, req);
        res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":"signature mismatch"}');
      },
    });
    for (const id of ['evt_ok', 'evt_refused']) {
      const sent = delivery(id);
      await post(rig.listener.url, sent.body, sent.headers);
    }
    expect(reports.map((r) => [r.eventId, r.status, r.answer])).toEqual([
      ['evt_ok', 200, undefined],
      ['evt_refused', 400, 'signature mismatch'],
    ]);
  });
});

describe('forwarding to an https app', () => {
  it('takes a self-signed certificate, as local apps have, and keeps the exact bytes', async () => {
    // test/fixtures/localhost-*.pem: a self-signed certificate for localhost and 127.0.0.1, for tests only.
    const fixture = (name: string) => readFile(fileURLToPath(new URL(`../fixtures/${name}`, import.meta.url)));
    const received: { path: string; body: Buffer; proto: unknown }[] = [];
    const app = createHttpsServer(
      { cert: await fixture('localhost-cert.pem'), key: await fixture('localhost-key.pem') },
      (req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (chunk: Buffer) => chunks.push(chunk));
        req.on('end', () => {
          received.push({ path: req.url ?? '', body: Buffer.concat(chunks), proto: req.headers['x-forwarded-proto'] });
          res.writeHead(202, { 'content-type': 'text/plain' }).end('queued over TLS');
        });
      },
    );
    await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
    const dir = await tempDir();
    const store = await CaptureStore.open({ path: join(dir.path, 'captures.json') });
    const listener = new Listener({
      store,
      secret: SECRET,
      port: 0,
      routes: [{ types: null, target: new URL(`https://localhost:${(app.address() as AddressInfo).port}/hooks`) }],
    });
    await listener.start();
    try {
      const sent = delivery('evt_tls');
      const answer = await post(listener.url, sent.body, sent.headers);
      expect(answer).toMatchObject({ status: 202, text: 'queued over TLS' });
      expect(received).toEqual([{ path: '/hooks', body: Buffer.from(sent.body), proto: 'http' }]);
      await expect.poll(() => store.newest(1)[0]?.forward?.statusCode).toBe(202);
    } finally {
      await listener.close(100);
      await store.close();
      await new Promise((resolve) => app.close(resolve));
      await dir.remove();
    }
  });
});

describe('an answer the app cuts short', () => {
  /** Sends a delivery with node:http and says what the sender saw: a whole answer, or an error. */
  const send = (url: string, id: string) =>
    new Promise<string>((resolve) => {
      const { body, headers } = delivery(id);
      const req = request(url, { method: 'POST', headers }, (res) => {
        res.on('data', () => {});
        res.on('end', () => resolve(`whole ${res.statusCode}`));
        res.on('aborted', () => resolve('error: aborted'));
        res.on('error', (error) => resolve(`error: ${error.message}`));
      });
      req.on('error', (error) => resolve(`error: ${error.message}`));
      req.end(body);
    });

  it.each([
    ['Content-Length 1000 with 100 bytes sent', { 'content-length': '1000' }],
    ['chunked, ended before its last chunk', {}],
  ])('is recorded as cut and reaches the sender as an error (%s)', async (_name, head) => {
    rig = await startListenerRig({
      secret: SECRET,
      respond: (_request, res) => {
        res.writeHead(200, head);
        res.write('x'.repeat(100));
        setTimeout(() => res.socket?.destroy(), 50);
      },
    });
    expect(await send(rig.listener.url, 'evt_cut')).toMatch(/^error/);
    const store = rig.store;
    await expect.poll(() => store.all()[0]?.forward?.cut).toBe(true);
    const [capture] = store.all();
    expect(capture.forward).toMatchObject({ statusCode: 200, cut: true, bodySize: 100 });
    expect(capture.forward?.error).toMatch(/closed the connection before its answer was complete|aborted/);
    expect(outcomeOf(capture)).toBe('failed');
  });
});
