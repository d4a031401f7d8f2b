import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { harOf, wholeCapture } from '../../src/captures/index.js';
import { type ListenSession, startListen } from '../../src/listen/index.js';
import type { ExporterEvent } from '../../src/tracing/config.js';
import { postSigned, startListenProcess } from '../helpers/listen.js';
import { type OtlpReceiver, startOtlpReceiver } from '../helpers/otlp.js';
import { portForRestarts } from '../helpers/ports.js';
import { type Receiver, startReceiver } from '../helpers/receiver.js';
import { tempDir } from '../helpers/sandbox.js';
import { SECRET, envelopeBody } from '../helpers/delivery.js';

const SERVER = 2;
const CLIENT = 3;

// One collector, one app and one traced listen for the file.
let collector: OtlpReceiver;
let app: Receiver;
let listen: ListenSession;
const said: ExporterEvent[] = [];
const cleanups: (() => Promise<unknown>)[] = [];

async function tracedListen(url: string, onTracing: (event: ExporterEvent) => void) {
  const dir = await tempDir();
  cleanups.push(dir.remove);
  const session = await startListen({
    forwardTo: app.url,
    port: 0,
    inspector: false,
    secret: SECRET,
    stateDir: join(dir.path, '.clockhook'),
    tracing: { url: `${url}/v1/traces`, serviceName: 'clockhook-listen' },
    onTracing,
  });
  cleanups.push(() => session.close());
  return session;
}

beforeAll(async () => {
  collector = await startOtlpReceiver();
  app = await startReceiver();
  listen = await tracedListen(collector.url, (event) => said.push(event));
});
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  await app.close();
  await collector.close();
});

const envelope = (id: string) => envelopeBody(id, { created: 1 });

/** The spans of the delivery of `eventId`, once its server span and its three children have arrived. */
async function spansOf(eventId: string) {
  let server: (typeof collector.spans)[number] | undefined;
  await expect
    .poll(
      () => {
        server = collector.spans.find((s) => s.kind === SERVER && s.attributes['clockhook.event.id'] === eventId);
        return server ? collector.spans.filter((s) => s.parentSpanId === server!.spanId).length : 0;
      },
      { timeout: 10_000 },
    )
    .toBeGreaterThanOrEqual(3);
  const children = collector.spans.filter((s) => s.parentSpanId === server!.spanId);
  const child = (name: string) => children.find((s) => s.name === name)!;
  return { server: server!, verify: child('verify'), capture: child('capture'), forward: child('POST') };
}

const appRequestOf = (eventId: string) => app.received.find((r) => JSON.parse(r.body.toString()).id === eventId)!;

describe('listen --otlp', () => {
  it('exports a server span per delivery, with verify, capture and forward under it, and the app joins its trace', async () => {
    expect((await postSigned(listen.ready.listener, envelope('evt_traced'), SECRET)).status).toBe(200);
    const { server, verify, capture, forward } = await spansOf('evt_traced');
    expect(server).toMatchObject({ name: 'POST /', parentSpanId: '', serviceName: 'clockhook-listen' });
    expect(server.attributes).toMatchObject({
      'http.request.method': 'POST',
      'http.response.status_code': 200,
      'clockhook.event.type': 'punch.created',
      'messaging.message.id': 'evt_traced',
      'clockhook.delivery.kind': 'first',
      'clockhook.signature': 'valid',
      'clockhook.app.status_code': 200,
    });
    expect(verify.attributes['clockhook.signature']).toBe('valid');
    expect(capture.attributes['clockhook.capture.id']).toMatch(/^cap_/);
    expect(forward).toMatchObject({ kind: CLIENT, traceId: server.traceId });
    expect(forward.attributes).toMatchObject({ 'url.full': `${app.url}/`, 'http.response.status_code': 200 });
    // The app's own spans become children of the forward.
    expect(appRequestOf('evt_traced').headers.traceparent).toBe(`00-${server.traceId}-${forward.spanId}-01`);
    const [stored] = listen.store.ofEvent('evt_traced');
    expect(stored.trace).toEqual({ traceId: server.traceId, spanId: server.spanId });
    // captures show --json and the HAR carry it.
    const body = Buffer.from(envelope('evt_traced'));
    expect(wholeCapture(stored, body, new Map()).trace?.traceId).toBe(server.traceId);
    const har = harOf([{ capture: stored, body }], '0.0.0', new Map());
    expect(har.log.entries[0]._clockhook.traceId).toBe(server.traceId);
  });

  it("honours an incoming traceparent as the delivery's parent", async () => {
    const traceId = 'a'.repeat(31) + '1';
    const parent = 'b'.repeat(15) + '2';
    const headers = { traceparent: `00-${traceId}-${parent}-01` };
    expect((await postSigned(listen.ready.listener, envelope('evt_parented'), SECRET, headers)).status).toBe(200);
    const { server, forward } = await spansOf('evt_parented');
    expect(server).toMatchObject({ traceId, parentSpanId: parent });
    expect(appRequestOf('evt_parented').headers.traceparent).toBe(`00-${traceId}-${forward.spanId}-01`);
  });

  it('links a replay to the delivery it repeats', async () => {
    expect((await postSigned(listen.ready.listener, envelope('evt_replayed'), SECRET)).status).toBe(200);
    const original = (await spansOf('evt_replayed')).server;
    const [captured] = listen.store.ofEvent('evt_replayed');
    await listen.listener.replay({ captureId: captured.id, mode: 'resign' });
    await expect
      .poll(() => collector.spans.filter((s) => s.attributes['clockhook.replay_of'] === captured.id).length)
      .toBe(1);
    const replay = collector.spans.find((s) => s.attributes['clockhook.replay_of'] === captured.id)!;
    expect(replay.attributes['clockhook.delivery.kind']).toBe('replay');
    expect(replay.links).toEqual([{ traceId: original.traceId, spanId: original.spanId }]);
  });

  it('costs no delivery while the collector is down, and says so once, and once when it is back', async () => {
    const port = await portForRestarts();
    const flaky = await startOtlpReceiver(port);
    const events: ExporterEvent[] = [];
    const session = await tracedListen(flaky.url, (event) => events.push(event));
    await flaky.close();
    for (const id of ['evt_down_1', 'evt_down_2'])
      expect((await postSigned(session.ready.listener, envelope(id), SECRET)).status).toBe(200);
    await expect.poll(() => events.map((e) => e.state), { timeout: 20_000 }).toEqual(['down']);
    expect((await postSigned(session.ready.listener, envelope('evt_down_3'), SECRET)).status).toBe(200);
    await flaky.listen(port);
    cleanups.push(() => flaky.close());
    expect((await postSigned(session.ready.listener, envelope('evt_back'), SECRET)).status).toBe(200);
    await expect.poll(() => events.map((e) => e.state), { timeout: 20_000 }).toEqual(['down', 'up']);
    await expect.poll(() => flaky.spans.some((s) => s.attributes['clockhook.event.id'] === 'evt_back')).toBe(true);
    expect(said).toEqual([]); // the file's collector never went down
  }, 60_000);
});

describe('with tracing off', () => {
  /** A listen process whose every import is written to a file; the specifiers it resolved, once a delivery went through. */
  async function importsOf(extra: string[]): Promise<string> {
    const dir = await tempDir();
    cleanups.push(dir.remove);
    const log = join(dir.path, 'imports.log');
    const args = ['--secret', SECRET, '--forward-to', app.url, '--no-inspector', ...extra];
    const proc = await startListenProcess(args, dir.path, {
      NODE_OPTIONS: `--import ${fileURLToPath(new URL('../fixtures/record-imports.mjs', import.meta.url))}`,
      IMPORTS_LOG: log,
    });
    try {
      expect((await postSigned(proc.ready.listener, envelope(`evt_imports_${extra.length}`), SECRET)).status).toBe(200);
    } finally {
      await proc.stop('SIGINT');
    }
    return readFile(log, 'utf8');
  }

  it('adds no header to what the app gets, and loads no OpenTelemetry module', async () => {
    const off = await importsOf([]);
    expect(off).toContain('commander'); // the hook sees the CLI's imports
    expect(off).not.toContain('@opentelemetry');
    const request = app.received.find((r) => JSON.parse(r.body.toString()).id === 'evt_imports_0')!;
    expect(request.headers.traceparent).toBeUndefined();
    expect(request.headers.tracestate).toBeUndefined();
    // The check can fail: with tracing on, the same hook sees them.
    expect(await importsOf(['--otlp', collector.url])).toContain('@opentelemetry/sdk-trace-node');
  }, 60_000);
});

describe('relay --otlp', () => {
  it('makes a span of its own and passes the context through the tunnel: one trace covers relay and listener', async () => {
    const { startOtelTracing } = await import('../../src/tracing/otel.js');
    const { startRelayServer } = await import('../../src/relay/index.js');
    const tracer = startOtelTracing(`${collector.url}/v1/traces`, 'clockhook-relay', () => {});
    const relay = await startRelayServer({ port: 0, host: '127.0.0.1', tracer });
    cleanups.push(() => tracer.shutdown());
    cleanups.push(() => relay.close());
    const dir = await tempDir();
    cleanups.push(dir.remove);
    const relayed = await startListen({
      forwardTo: app.url,
      port: 0,
      inspector: false,
      relay: relay.url,
      stateDir: join(dir.path, '.clockhook'),
      tracing: { url: `${collector.url}/v1/traces`, serviceName: 'clockhook-listen' },
    });
    cleanups.push(() => relayed.close());
    const secret = relayed.secret as string;
    const res = await postSigned(relayed.ready.publicUrl as string, envelope('evt_relayed'), secret);
    expect(res.status).toBe(200);
    const { server, forward } = await spansOf('evt_relayed');
    await expect
      .poll(() => collector.trace(server.traceId).filter((s) => s.serviceName === 'clockhook-relay').length)
      .toBe(1);
    const atRelay = collector.trace(server.traceId).find((s) => s.serviceName === 'clockhook-relay')!;
    expect(atRelay).toMatchObject({ kind: SERVER, name: 'POST /c/{channel}', parentSpanId: '' });
    expect(server.parentSpanId).toBe(atRelay.spanId);
    expect(appRequestOf('evt_relayed').headers.traceparent).toBe(`00-${server.traceId}-${forward.spanId}-01`);
  }, 40_000);
});
