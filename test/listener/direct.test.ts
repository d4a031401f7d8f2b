import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { signPayload } from '../../src/contract/index.js';
import { directExchange } from '../../src/listener/direct.js';
import { Listener } from '../../src/listener/index.js';
import type { CaptureStore } from '../../src/store/index.js';
import type { Receiver } from '../helpers/receiver.js';
import { type ListenerRig, startListenerRig } from '../helpers/listener-rig.js';
import { eventually } from '../helpers/eventually.js';
import { SECRET } from '../helpers/delivery.js';

let rig: ListenerRig;
let app: Receiver;
let store: CaptureStore;
let listener: Listener;

beforeEach(async () => {
  rig = await startListenerRig({
    respond: (request, res) => {
      res.writeHead(202, { 'content-type': 'application/octet-stream', 'x-app': 'echo' });
      res.end(request.body);
    },
    targetPath: '/hooks',
    secret: SECRET,
    maxBodyBytes: 1024,
  });
  ({ app, store, listener } = rig);
});
afterEach(async () => {
  await listener.close(100); // one test starts a listener of its own
  await rig.close();
});

const delivery = (body: Buffer, extra: Record<string, string> = {}) => ({
  method: 'POST',
  path: '/a?b=1',
  headers: {
    'Content-Type': 'application/json',
    'X-Service-Signature': signPayload({ payload: body, secret: SECRET }),
    ...extra,
  },
  body,
});

describe('a request handed to the listener in-process (what the relay client does)', () => {
  it('takes the path of an HTTP delivery: verified, captured, forwarded byte for byte, the app answer returned', async () => {
    const body = Buffer.from([0x7b, 0x22, 0x69, 0x64, 0x22, 0x3a, 0x31, 0x7d, 0xff, 0x00]);
    const answer = await listener.handleDirect({
      ...delivery(body, { 'X-Forwarded-For': '203.0.113.9' }),
      remoteAddress: '198.51.100.7',
      encrypted: true,
    });
    expect(answer.status).toBe(202);
    expect(answer.headers['x-app']).toBe('echo');
    expect(answer.body.equals(body)).toBe(true);
    const [got] = app.received;
    expect(got.url).toBe('/hooks/a?b=1');
    expect(got.body.equals(body)).toBe(true);
    // The hop that handed it over is added behind the sender the relay named.
    expect(got.headers['x-forwarded-for']).toBe('203.0.113.9,198.51.100.7');
    expect(got.headers['x-forwarded-proto']).toBe('https');
    // The forward result is recorded just after the answer went back, as over HTTP.
    const capture = await vi.waitFor(() => {
      const [first] = store.all();
      expect(first.forward).toBeTruthy();
      return first;
    }, eventually);
    expect(capture).toMatchObject({
      method: 'POST',
      path: '/a?b=1',
      bodyEncoding: 'base64',
      signature: { status: 'valid' },
      forward: { statusCode: 202 },
    });
    // Stored lower-cased, as over HTTP.
    expect(capture.headers['content-type']).toBe('application/json');
    expect(Object.keys(capture.headers).every((name) => name === name.toLowerCase())).toBe(true);
  });

  it('rejects a bad signature with 400 and forwards nothing', async () => {
    const body = Buffer.from('{"id":"evt_1"}');
    const answer = await listener.handleDirect(delivery(body, { 'X-Service-Signature': 't=1,v1=00' }));
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body.toString()).error.code).toBe('signature_invalid');
    expect(app.received).toHaveLength(0);
    expect(store.all()[0].rejected).toEqual({ statusCode: 400, code: 'signature_invalid' });
  });

  it('answers 413 to a body past the limit, capturing its first bytes', async () => {
    const body = Buffer.alloc(3000, 0x61);
    const answer = await listener.handleDirect(delivery(body));
    expect(answer.status).toBe(413);
    expect(JSON.parse(answer.body.toString()).error.code).toBe('payload_too_large');
    const [capture] = store.all();
    expect(capture).toMatchObject({ bodySize: 3000, bodyTruncated: true });
    expect(capture.body).toHaveLength(1024);
    expect(app.received).toHaveLength(0);
  });

  it('answers 503 once the listener is closing, and handles nothing', async () => {
    await listener.close(100);
    const answer = await listener.handleDirect(delivery(Buffer.from('{}')));
    expect(answer.status).toBe(503);
    expect(JSON.parse(answer.body.toString()).error.code).toBe('listener_closing');
    expect(store.all()).toHaveLength(0);
  });
});

describe('replay (handed to the listener in-process too)', () => {
  it('records a replay capture of the original bytes, re-signed, and forwards it', async () => {
    const body = Buffer.from('{"id":"evt_r","type":"punch.created"}');
    await listener.handleDirect(delivery(body));
    const [original] = store.all();
    const result = await listener.replay({ captureId: original.id, mode: 'resign' });
    expect(result.statusCode).toBe(202);
    expect(store.get(result.captureId)).toMatchObject({
      source: 'replay',
      replayOf: original.id,
      signature: { status: 'valid' },
    });
    // It records the headers it sent, its body's length among them.
    expect(store.get(result.captureId)?.headers['content-length']).toBe(String(body.length));
    expect(app.received.at(-1)?.body.equals(body)).toBe(true);
  });

  it('says why when the listener refuses the replay (a path outside --path after a restart)', async () => {
    await listener.handleDirect(delivery(Buffer.from('{"id":"evt_p"}')));
    const [original] = store.all();
    await listener.close(100);
    listener = new Listener({
      store,
      routes: [{ types: null, target: new URL(app.url) }],
      port: 0,
      secret: SECRET,
      path: '/elsewhere',
    });
    await listener.start();
    await expect(listener.replay({ captureId: original.id, mode: 'resign' })).rejects.toMatchObject({
      code: 'replay_failed',
      message: expect.stringContaining('/a is outside it'),
    });
    expect(store.all()).toHaveLength(1);
  });
});

describe('directExchange', () => {
  it('collects head and body; an answer cut after its head becomes a 502 saying so', async () => {
    const whole = directExchange({ method: 'POST', path: '/', headers: {}, body: Buffer.alloc(0) });
    whole.res.setHeader('X-One', '1');
    whole.res.writeHead(201, 'Created', { 'content-length': 2 });
    whole.res.write('o');
    whole.res.end('k');
    expect(await whole.answer).toEqual({
      status: 201,
      headers: { 'x-one': '1', 'content-length': '2' },
      body: Buffer.from('ok'),
    });

    const cut = directExchange({ method: 'POST', path: '/', headers: {}, body: Buffer.alloc(0) });
    cut.res.writeHead(200);
    cut.res.write('partial');
    cut.res.destroy();
    const answer = await cut.answer;
    expect(answer.status).toBe(502);
    expect(JSON.parse(answer.body.toString()).error.code).toBe('answer_cut');
  });
});
