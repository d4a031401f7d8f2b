import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { signPayload } from '../../src/contract/index.js';
import { type DeliveryReport, Listener } from '../../src/listener/index.js';
import type { Capture, CaptureStore } from '../../src/store/index.js';
import { postSigned } from '../helpers/listen.js';
import { sendRaw } from '../helpers/raw.js';
import { answer200, type Receiver } from '../helpers/receiver.js';
import { type ListenerRig, startListenerRig } from '../helpers/listener-rig.js';
import { tempDir } from '../helpers/sandbox.js';
import { recordingLogger } from '../helpers/logger.js';
import { SECRET, envelopeBody } from '../helpers/delivery.js';

const BODY = envelopeBody('evt_h1', { data: { id: 1 } });

let rig: ListenerRig;
let app: Receiver;
let store: CaptureStore;
let listener: Listener;

beforeEach(async () => {
  rig = await startListenerRig({ secret: SECRET, requestTimeoutMs: 600 });
  ({ app, store, listener } = rig);
});
afterEach(async () => {
  await listener.close(100); // safe to call twice: the rig closes it again
  await rig.close();
});

/** A valid delivery still goes through: the protection did not cost the listener its function. */
async function stillForwards() {
  const before = app.received.length;
  const res = await postSigned(listener.url, BODY, SECRET);
  expect(res.status).toBe(200);
  expect(app.received.length).toBe(before + 1);
  expect(app.received.at(-1)?.body.toString()).toBe(BODY);
}

const request = (head: string, body = '') => `${head}\r\n\r\n${body}`;

describe('malformed HTTP at the listener', () => {
  it.each([
    ['garbage instead of HTTP', ['\x16\x03\x01\x00\xa5hello there\r\n\r\n'], /^HTTP\/1\.1 400/],
    [
      'garbage chunked encoding',
      [request('POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked', 'zz\r\nnot hex\r\n0\r\n\r\n')],
      /^HTTP\/1\.1 400/,
    ],
    [
      'both Content-Length and chunked',
      [request('POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked', '0\r\n\r\n')],
      /^HTTP\/1\.1 400/,
    ],
    [
      'a non-numeric Content-Length',
      [request('POST / HTTP/1.1\r\nHost: x\r\nContent-Length: lots', 'abc')],
      /^HTTP\/1\.1 400/,
    ],
    [
      'headers over the limit',
      [request(`POST / HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}`)],
      /^HTTP\/1\.1 431/,
    ],
    ['an absurdly long path', [request(`POST /${'p'.repeat(20_000)} HTTP/1.1\r\nHost: x`)], /^HTTP\/1\.1 431/],
  ])('answers %s with an HTTP error and closes', async (_name, chunks, status) => {
    const result = await sendRaw(listener.port, chunks);
    expect(result.status).toMatch(status);
    expect(result.closed).toBe(true);
    await stillForwards();
  });

  it('answers a body shorter than its Content-Length with 408 once the time limit passes', async () => {
    const result = await sendRaw(listener.port, [
      request('POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000', '{"id":'),
    ]);
    expect(result.status).toMatch(/^HTTP\/1\.1 408/);
    expect(result.ms).toBeLessThan(2500);
    expect(store.all()).toHaveLength(0);
    await stillForwards();
  });

  it('drops a slowloris that trickles headers forever', async () => {
    const drip = Array.from({ length: 40 }, (_, i) => (i === 0 ? 'POST / HTTP/1.1\r\n' : `X-${i}: y\r\n`));
    const result = await sendRaw(listener.port, drip, { gapMs: 100, waitMs: 5000 });
    expect(result.closed).toBe(true);
    expect(result.ms).toBeLessThan(2500);
    await stillForwards();
  });

  it('drops a body that never finishes', async () => {
    const drip = [
      `POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\nX-Service-Signature: t=1,v1=00\r\n\r\n`,
      ...Array.from({ length: 40 }, () => 'aaaa'),
    ];
    const result = await sendRaw(listener.port, drip, { gapMs: 100, waitMs: 5000 });
    expect(result.closed).toBe(true);
    expect(result.ms).toBeLessThan(2500);
    await stillForwards();
  });

  it('answers 413 to an endless body as soon as it passes 5 MiB, and closes', async () => {
    // A request limit far beyond the time 5 MiB takes to arrive, even on a loaded machine (with 600 ms, a
    // full test run once got the 408 first): only a listener that waits for the body's end gets near it.
    await listener.close(100);
    await rig.close();
    rig = await startListenerRig({ secret: SECRET, requestTimeoutMs: 30_000 });
    ({ app, store, listener } = rig);
    const { connect } = await import('node:net');
    const started = performance.now();
    const result = await new Promise<{ status: string; ms: number }>((resolve) => {
      const socket = connect(listener.port, '127.0.0.1', () => {
        socket.write('POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000000\r\n\r\n');
        const chunk = Buffer.alloc(256 * 1024, 'e');
        const pump = () => {
          while (!socket.destroyed && socket.write(chunk));
          if (!socket.destroyed) socket.once('drain', pump);
        };
        pump();
      });
      let response = '';
      socket.on('data', (data) => {
        response += data.toString();
        if (response.includes('\r\n\r\n'))
          resolve({ status: response.split('\r\n', 1)[0], ms: performance.now() - started });
      });
      socket.on('error', () => {});
      socket.on('close', () => resolve({ status: response.split('\r\n', 1)[0], ms: performance.now() - started }));
    });
    // 413, not the 408 the request limit would give: the answer did not wait for the (endless) body to end.
    expect(result.status).toMatch(/^HTTP\/1\.1 413/);
    expect(result.ms).toBeLessThan(10_000);
    await expect.poll(() => store.all().at(-1)?.bodySize).toBe(1_000_000_000);
    expect((await store.body(store.all().at(-1) as Capture)).length).toBe(5 * 1024 * 1024);
    await stillForwards();
  });

  it('refuses methods other than POST with 405, capturing nothing', async () => {
    for (const method of ['GET', 'PUT', 'DELETE', 'OPTIONS', 'PATCH']) {
      const result = await sendRaw(listener.port, [request(`${method} / HTTP/1.1\r\nHost: x\r\nConnection: close`)]);
      expect(result.status, method).toMatch(/^HTTP\/1\.1 405/);
      expect(result.response.toLowerCase()).toContain('allow: post');
    }
    expect(store.all()).toHaveLength(0);
    await stillForwards();
  });

  it('keeps odd paths on the target host', async () => {
    const res = await postSigned(`${listener.url.replace(/\/$/, '')}//evil.example/x?y=%00`, BODY, SECRET);
    // It reached the target app (http-proxy folds the double slash); no other host was asked.
    expect(res.status).toBe(200);
    expect(app.received.at(-1)?.url).toBe('/evil.example/x?y=%00');
    await expect.poll(() => store.all().at(-1)?.forward?.target).toMatch(new RegExp(`^${app.url}/`));
  });

  it('survives thousands of connections opened and abandoned', async () => {
    const { connect } = await import('node:net');
    const sockets = await Promise.all(
      Array.from(
        { length: 2000 },
        (_, i) =>
          new Promise<import('node:net').Socket>((resolve) => {
            const socket = connect(listener.port, '127.0.0.1', () => {
              if (i % 2) socket.write('POST / HTTP/1.1\r\nHost: x\r\n'); // half of them start a request
              resolve(socket);
            });
            socket.on('error', () => resolve(socket));
          }),
      ),
    );
    await stillForwards();
    for (const socket of sockets) socket.destroy();
    await stillForwards();
  }, 20_000);
});

describe('the budget of bodies held at once', () => {
  const KiB = 1024;
  /** A signed delivery of about `size` bytes, with an event id of its own. */
  const delivery = (n: number, size: number) => {
    const head = envelopeBody(`evt_budget${n}`, { data: { pad: '' } });
    return head.replace('"pad":""', `"pad":"${'x'.repeat(size - head.length)}"`);
  };

  it('answers 503 listener_busy while the bodies held fill it, captures nothing of it, and takes deliveries again once they are answered', async () => {
    // An app that holds every answer until told to give them, so the bodies stay held.
    const held: (() => void)[] = [];
    const logger = recordingLogger();
    const { warnings } = logger;
    const reports: DeliveryReport[] = [];
    const budget = await startListenerRig({
      secret: SECRET,
      maxBodyBytes: 512 * KiB,
      maxBufferedBytes: 1024 * KiB,
      respond: (_request, res) => held.push(() => res.writeHead(200).end('{"ok":true}')),
      logger,
      onDelivery: (report) => reports.push(report),
    });
    try {
      const url = budget.listener.url;
      // One after the other, so that the store's order is known (two at once may land either way round).
      const first = [postSigned(url, delivery(1, 400 * KiB), SECRET)];
      await budget.app.waitFor(1);
      first.push(postSigned(url, delivery(2, 400 * KiB), SECRET));
      await budget.app.waitFor(2);

      // 800 KiB held: another 400 KiB would pass the 1 MiB budget.
      const refused = await postSigned(url, delivery(3, 400 * KiB), SECRET);
      expect(refused.status).toBe(503);
      expect(refused.headers.get('retry-after')).toBe('10');
      expect(JSON.parse(refused.text).error).toMatchObject({
        type: 'api_error',
        code: 'listener_busy',
        message: expect.stringContaining('--max-buffer'),
      });
      expect(reports.at(-1)).toMatchObject({ captureId: null, status: 503, error: 'listener_busy' });
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(/Raise --max-buffer/);
      // What fits still goes through: the budget counts bytes, not requests.
      const small = postSigned(url, delivery(4, 2 * KiB), SECRET);
      await budget.app.waitFor(3);
      expect(budget.app.received).toHaveLength(3);
      expect(budget.store.all().map((c) => c.envelope?.id)).toEqual(['evt_budget1', 'evt_budget2', 'evt_budget4']);

      budget.app.setResponder(answer200);
      for (const answer of held.splice(0)) answer();
      expect((await Promise.all([...first, small])).map((r) => r.status)).toEqual([200, 200, 200]);
      // Done with (answered, and the forward's result stored), the bodies no longer count: the refused
      // delivery, sent again as the service would, is taken.
      let retried = await postSigned(url, delivery(3, 400 * KiB), SECRET);
      for (let tries = 1; retried.status === 503 && tries < 50; tries += 1) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        retried = await postSigned(url, delivery(3, 400 * KiB), SECRET);
      }
      expect(retried.status).toBe(200);
      expect(budget.store.all().map((c) => c.envelope?.id)).toEqual([
        'evt_budget1',
        'evt_budget2',
        'evt_budget4',
        'evt_budget3',
      ]);
    } finally {
      held.splice(0).forEach((answer) => answer());
      await budget.close();
    }
  });

  it('refuses a request handed over whole (by the relay client) the same way', async () => {
    const held: (() => void)[] = [];
    const budget = await startListenerRig({
      secret: SECRET,
      maxBodyBytes: 512 * KiB,
      maxBufferedBytes: 1024 * KiB,
      respond: (_request, res) => held.push(() => res.writeHead(200).end('{"ok":true}')),
    });
    const handOver = (n: number) => {
      const body = Buffer.from(delivery(n, 400 * KiB));
      return budget.listener.handleDirect({
        method: 'POST',
        path: '/',
        headers: {
          'content-type': 'application/json',
          'x-service-signature': signPayload({ payload: body, secret: SECRET }),
        },
        body,
      });
    };
    try {
      const first = [handOver(1), handOver(2)];
      await budget.app.waitFor(2);
      const refused = await handOver(3);
      expect(refused.status).toBe(503);
      expect(JSON.parse(refused.body.toString()).error.code).toBe('listener_busy');
      for (const answer of held.splice(0)) answer();
      expect((await Promise.all(first)).map((a) => a.status)).toEqual([200, 200]);
      expect(budget.store.all()).toHaveLength(2);
    } finally {
      held.splice(0).forEach((answer) => answer());
      await budget.close();
    }
  });

  it('keeps no decoded copy of a large body while the app has it, only its bytes and the capture as stored', async () => {
    // In a child with --expose-gc, so that what is still held can be weighed after a full collection.
    // The app takes 8 bodies of 4 MiB and holds its answers; the listener holds their bytes (outside
    // V8's heap) and must not keep each one's text as well: that would be 32 MiB more heap.
    const dir = await tempDir();
    const dist = (module: string) => JSON.stringify(pathToFileURL(join(process.cwd(), 'dist', module)).href);
    const script = `
      const { createServer } = await import('node:http');
      const { Listener } = await import(${dist('listener/index.js')});
      const { CaptureStore } = await import(${dist('store/index.js')});
      let taken = 0;
      const held = [];
      const app = createServer((req, res) => { req.resume(); held.push(res); taken += 1; });
      await new Promise((resolve) => app.listen(0, '127.0.0.1', resolve));
      const store = await CaptureStore.open({ path: ${JSON.stringify(join(dir.path, 'captures.json'))} });
      const listener = new Listener({ store, routes: [{ types: null, target: new URL('http://127.0.0.1:' + app.address().port + '/') }], port: 0 });
      await listener.start();
      const pad = 'x'.repeat(4 * 2 ** 20);
      globalThis.gc();
      const before = process.memoryUsage().heapUsed;
      for (let i = 0; i < 8; i++) {
        const body = Buffer.from(JSON.stringify({ id: 'evt_large' + i, object: 'event', type: 'punch.created', api_version: '2026-11-01', created: 1790000000, data: { pad } }));
        void fetch(listener.url, { method: 'POST', body });
      }
      while (taken < 8) await new Promise((resolve) => setTimeout(resolve, 10));
      globalThis.gc();
      console.log(JSON.stringify({ grown: process.memoryUsage().heapUsed - before, captures: store.all().length }));
      process.exit(0);`;
    try {
      const { stdout } = await promisify(execFile)(process.execPath, [
        '--expose-gc',
        '--input-type=module',
        '-e',
        script,
      ]);
      const { grown, captures } = JSON.parse(stdout) as { grown: number; captures: number };
      expect(captures).toBe(8);
      expect(grown / 2 ** 20).toBeLessThan(12);
    } finally {
      await dir.remove();
    }
  });

  it('cannot be smaller than the largest body', () => {
    expect(() => new Listener({ store, routes: [], maxBodyBytes: 1000, maxBufferedBytes: 999 })).toThrow(
      /at least maxBodyBytes/,
    );
  });
});
