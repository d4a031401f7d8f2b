import { saveRelayRecord } from '../../src/folder/index.js';
import { cp, mkdir, readFile } from 'node:fs/promises';
import { request as httpsRequest } from 'node:https';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { signPayload } from '../../src/contract/index.js';
import { silentLogger } from '../../src/logger.js';
import {
  channelFor,
  connectRelay,
  relayRecordFor,
  type RelayRequestLog,
  type RelayServer,
  startRelayServer,
} from '../../src/relay/index.js';
import { encodeFrame, PROTOCOL_HEADER, PROTOCOL_VERSION } from '../../src/relay/protocol.js';
import { runCli, type SpawnedCli } from '../helpers/cli.js';
import { post, readSettledCaptures, startListenProcess } from '../helpers/listen.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { tempDir } from '../helpers/sandbox.js';
import { portForRestarts } from '../helpers/ports.js';
import { eventually } from '../helpers/eventually.js';
import { recordingLogger } from '../helpers/logger.js';
import { envelopeBody } from '../helpers/delivery.js';

let dir: { path: string; remove: () => Promise<void> };
let app: Receiver;
let relay: RelayServer;
let logs: RelayRequestLog[];
const procs: SpawnedCli[] = [];

async function relayOn(port = 0, options: Parameters<typeof startRelayServer>[0] = {}) {
  return startRelayServer({
    port,
    host: '127.0.0.1',
    retryAfterSeconds: 2,
    onRequest: (log) => logs.push(log),
    ...options,
  });
}

beforeEach(async () => {
  dir = await tempDir();
  logs = [];
  app = await startReceiver((request, res) => {
    res.writeHead(201, { 'content-type': 'application/octet-stream', 'x-app': 'echo' });
    res.end(request.body);
  });
  relay = await relayOn();
});
afterEach(async () => {
  for (const proc of procs.splice(0)) await proc.stop('SIGKILL');
  await relay.close();
  await app.close();
  await dir.remove();
});

async function listen(cwd = dir.path, ...extra: string[]) {
  const proc = await startListenProcess(
    ['--relay', relay.url, '--forward-to', app.url, '--print-secret', ...extra],
    cwd,
  );
  procs.push(proc);
  return proc;
}

const envelope = (id: string) => envelopeBody(id, { data: { n: id } });
const signed = (body: string | Buffer, secret: string) => ({
  'x-service-signature': signPayload({ payload: body, secret }),
});

/** A listener that answers only when told to. */
async function heldListener(letter: string) {
  const socket = new WebSocket(`${relay.url.replace('http', 'ws')}/connect`, {
    headers: { authorization: `Bearer ${letter.repeat(43)}`, [PROTOCOL_HEADER]: PROTOCOL_VERSION },
  });
  const requests: number[] = [];
  const ready = new Promise<string>((resolve) => {
    socket.on('message', (data, isBinary) => {
      if (!isBinary) return resolve(JSON.parse(String(data)).publicUrl);
      const message = data as Buffer;
      requests.push(JSON.parse(message.toString('utf8', 4, 4 + message.readUInt32BE(0))).id);
    });
  });
  const publicUrl = await ready;
  const answerAll = () => {
    for (const id of requests.splice(0))
      socket.send(encodeFrame({ type: 'response', id, status: 200, headers: {}, body: Buffer.from('ok') }, true));
  };
  return { publicUrl, requests, answerAll, close: () => socket.close() };
}

describe('relay and listen --relay', () => {
  it('gets a stable public URL and relays a delivery byte for byte, passing the app answer back', async () => {
    const proc = await listen();
    const { publicUrl, secret } = proc.ready;
    expect(publicUrl).toMatch(new RegExp(`^${relay.url}/c/[\\w-]{32}$`));
    const body = envelope('evt_relay1');
    const res = await post(`${publicUrl}/hooks?x=1`, body, signed(body, secret));
    expect(res.status).toBe(201);
    expect(res.text).toBe(body);
    expect(res.headers.get('x-app')).toBe('echo');
    const [got] = app.received;
    expect(got.url).toBe('/hooks?x=1');
    expect(got.body.toString()).toBe(body);
    const [capture] = await readSettledCaptures(dir.path);
    expect(capture).toMatchObject({ path: '/hooks?x=1', signature: { status: 'valid' }, forward: { statusCode: 201 } });
    expect(logs.at(-1)).toEqual({
      event: 'request',
      channel: publicUrl.split('/').at(-1),
      method: 'POST',
      path: '/hooks',
      status: 201,
      durationMs: expect.any(Number),
    });
  });

  it('prints the ready line first with --json, and the relay line of its first connection after it', async () => {
    const proc = await listen();
    await proc.waitForLine((l) => l.event === 'relay' && l.state === 'connected');
    expect(proc.lines[0]).toMatchObject({ event: 'ready' });
    expect(proc.lines.filter((l) => l.event === 'relay')).toEqual([
      { event: 'relay', state: 'connected', publicUrl: proc.ready.publicUrl },
    ]);
  });

  it('registers the channel URL with --path appended, so relayed deliveries land under it', async () => {
    const proc = await listen(dir.path, '--path', '/webhooks');
    expect(proc.ready.publicUrl).toMatch(/\/c\/[\w-]{32}\/webhooks$/);
    const event = JSON.parse((await runCli(['trigger', 'punch.created', '--json'], { cwd: dir.path })).stdout);
    expect(await proc.waitForLine((l) => l.event === 'delivery')).toMatchObject({
      eventId: event.id,
      signature: 'valid',
      status: 201,
    });
    expect(app.received.at(-1)?.url).toBe('/');
  });

  it('answers 503 with Retry-After while the listener is down, and delivers once it is back on the same URL', async () => {
    // The embedded sandbox on the same port both times, as with the default 4302.
    const sandboxPort = String(await portForRestarts());
    const first = await listen(dir.path, '--sandbox-port', sandboxPort);
    const { publicUrl, secret } = first.ready;
    await first.stop('SIGTERM');
    const body = envelope('evt_down');
    const down = await post(publicUrl, body, signed(body, secret));
    expect(down.status).toBe(503);
    expect(down.headers.get('retry-after')).toBe('2');
    const second = await listen(dir.path, '--sandbox-port', sandboxPort);
    expect(second.ready.publicUrl).toBe(publicUrl);
    expect(second.ready.endpointId).toBe(first.ready.endpointId); // kept between runs, secret on file
    expect((await post(publicUrl, body, signed(body, secret))).status).toBe(201);
  });

  it('keeps the endpoint and its secret when the sandbox port is taken on the next run', async () => {
    const sandboxPort = await portForRestarts();
    const first = await listen(dir.path, '--sandbox-port', String(sandboxPort));
    const { publicUrl, secret } = first.ready;
    await first.stop('SIGTERM');
    // Something else on the port: the embedded sandbox takes another one, over the same state file.
    const holder = createServer().listen(sandboxPort, '127.0.0.1');
    await new Promise((resolve) => holder.once('listening', resolve));
    try {
      const second = await listen(dir.path, '--sandbox-port', String(sandboxPort));
      expect(second.ready.apiBase).not.toBe(first.ready.apiBase);
      expect(second.ready.endpointId).toBe(first.ready.endpointId);
      expect(second.stderr).not.toContain('Deleting endpoint');
      const body = envelope('evt_moved_sandbox');
      expect((await post(publicUrl, body, signed(body, secret))).status).toBe(201);
    } finally {
      await new Promise((resolve) => holder.close(resolve));
    }
  });

  it('reconnects by itself after the relay restarts', async () => {
    // The relay comes back on the same port: one no other test can be given meanwhile.
    const port = await portForRestarts();
    await relay.close();
    relay = await relayOn(port);
    const proc = await listen();
    const { publicUrl, secret } = proc.ready;
    await relay.close();
    await proc.waitForLine((l) => l.event === 'relay' && l.state === 'disconnected');
    relay = await relayOn(port);
    await proc.waitForLine(
      (l) =>
        l.event === 'relay' &&
        l.state === 'connected' &&
        proc.lines.indexOf(l) > proc.lines.findIndex((x) => x.state === 'disconnected'),
    );
    const body = envelope('evt_after_restart');
    expect((await post(publicUrl, body, signed(body, secret))).status).toBe(201);
  });

  it('answers 404 for a channel that never had a listener, and for malformed ids', async () => {
    expect((await post(`${relay.url}/c/${channelFor('x'.repeat(43))}`, '{}')).status).toBe(404);
    expect((await post(`${relay.url}/c/short`, '{}')).status).toBe(404);
    expect((await post(`${relay.url}/elsewhere`, '{}')).status).toBe(404);
  });

  it('refuses a token that does not own the channel, or is too short', async () => {
    const status = (headers: Record<string, string>) =>
      new Promise<number>((resolve) => {
        const ws = new WebSocket(`${relay.url.replace('http', 'ws')}/connect`, { headers });
        ws.once('open', () => {
          ws.close();
          resolve(101);
        });
        ws.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
        ws.once('error', () => resolve(0));
      });
    const token = 'a'.repeat(43);
    expect(await status({ authorization: `Bearer ${token}`, 'x-clockhook-channel': channelFor('b'.repeat(43)) })).toBe(
      401,
    );
    expect(await status({ authorization: 'Bearer short', 'x-clockhook-channel': channelFor('short') })).toBe(401);
    expect(await status({})).toBe(401);
    expect(await status({ authorization: `Bearer ${token}`, 'x-clockhook-channel': channelFor(token) })).toBe(101);
  });

  it('answers 100 concurrent requests on one channel, each with its own answer', async () => {
    const proc = await listen();
    const { publicUrl, secret } = proc.ready;
    const bodies = Array.from({ length: 100 }, (_, i) => envelope(`evt_c${i}`));
    const results = await Promise.all(bodies.map((body) => post(publicUrl, body, signed(body, secret))));
    expect(results.map((r) => r.status)).toEqual(bodies.map(() => 201));
    expect(results.map((r) => r.text)).toEqual(bodies);
  });

  it('refuses an oversize body with 413 and keeps the channel working', async () => {
    await relay.close();
    relay = await relayOn(0, { maxBody: 64 * 1024 });
    const proc = await listen();
    const { publicUrl, secret } = proc.ready;
    const big = Buffer.alloc(100 * 1024, 'x');
    expect((await post(publicUrl, big, signed(big, secret))).status).toBe(413);
    const body = envelope('evt_small');
    expect((await post(publicUrl, body, signed(body, secret))).status).toBe(201);
  });

  it('carries the sandbox delivery end to end through the relay', async () => {
    const proc = await listen();
    const event = JSON.parse((await runCli(['trigger', 'schedule.published', '--json'], { cwd: dir.path })).stdout);
    const line = await proc.waitForLine((l) => l.event === 'delivery');
    expect(line).toMatchObject({ eventId: event.id, signature: 'valid', status: 201 });
    const shown = JSON.parse((await runCli(['events', 'get', event.id, '--json'], { cwd: dir.path })).stdout);
    expect(shown.delivery_attempts[0].statusCode).toBe(201);
    expect(logs.some((l) => l.status === 201 && l.channel === proc.ready.publicUrl.split('/').at(-1))).toBe(true);
  });

  it('lets a second listener with the token replace the first, which exits 1 saying why', async () => {
    const first = await listen();
    const other = await tempDir();
    await mkdir(join(other.path, '.clockhook'), { recursive: true });
    await cp(join(dir.path, '.clockhook', 'relay.json'), join(other.path, '.clockhook', 'relay.json'));
    const second = await startListenProcess(['--relay', relay.url, '--forward-to', app.url], other.path);
    procs.push(second);
    expect(second.ready.publicUrl).toBe(first.ready.publicUrl);
    expect(await first.exited).toBe(1);
    expect(first.stderr).toContain('Another clockhook listen connected with this channel token');
    await second.stop('SIGKILL');
    await other.remove();
  });

  it('never gives a late answer to the request that came after it', async () => {
    await relay.close();
    relay = await relayOn(0, { maxInFlight: 1, responseTimeoutMs: 300 });
    const token = 'l'.repeat(43);
    const client = new WebSocket(`${relay.url.replace('http', 'ws')}/connect`, {
      headers: { authorization: `Bearer ${token}` },
    });
    const frames: { id: number; path: string }[] = [];
    const arrived: (() => void)[] = [];
    client.on('message', (data) => {
      const frame = JSON.parse(String(data));
      if (frame.type !== 'request') return;
      frames.push(frame);
      arrived.shift()?.();
    });
    const nextFrame = () => new Promise<void>((resolve) => arrived.push(resolve));
    const { publicUrl } = await new Promise<{ publicUrl: string }>((resolve) =>
      client.once('message', (data) => resolve(JSON.parse(String(data)))),
    );
    const respond = (id: number, status: number) =>
      client.send(
        JSON.stringify({
          type: 'response',
          id,
          status,
          headers: {},
          body: Buffer.from(String(status)).toString('base64'),
        }),
      );

    // The first is never answered in time: 504, and its place is free again.
    const first = nextFrame();
    const late = post(`${publicUrl}/late`, '{}');
    await first;
    expect((await late).status).toBe(504);

    const second = nextFrame();
    const next = post(`${publicUrl}/next`, '{}');
    await second;
    respond(frames[0].id, 299); // the first one's answer, too late: it must not become the second's
    respond(frames[1].id, 202);
    expect(await next).toMatchObject({ status: 202, text: '202' });
    expect(frames.map((f) => f.path)).toEqual(['/late', '/next']);
    client.close();
  });

  it('sends a version-2 listener its requests as binary messages, and relays raw bytes both ways', async () => {
    const client = new WebSocket(`${relay.url.replace('http', 'ws')}/connect`, {
      headers: { authorization: `Bearer ${'b'.repeat(43)}`, [PROTOCOL_HEADER]: PROTOCOL_VERSION },
    });
    const messages: { data: Buffer; isBinary: boolean }[] = [];
    const arrived = new Promise<void>((resolve) => {
      client.on('message', (data, isBinary) => {
        messages.push({ data: data as Buffer, isBinary });
        if (messages.length === 2) resolve();
      });
    });
    await new Promise((resolve) => client.once('open', resolve));
    await new Promise((resolve) => setImmediate(resolve));
    const { publicUrl } = JSON.parse(String(messages[0].data));
    const bytes = Buffer.from([0xff, 0x00, 0xfe, 0x80, 0x7b]); // not UTF-8: base64 or text would have to change it
    const sent = fetch(`${publicUrl}/raw`, { method: 'POST', body: bytes });
    await arrived;
    const { data, isBinary } = messages[1];
    expect(isBinary).toBe(true);
    const length = data.readUInt32BE(0);
    const fields = JSON.parse(data.toString('utf8', 4, 4 + length));
    expect(fields).toMatchObject({ type: 'request', method: 'POST', path: '/raw' });
    expect(fields.body).toBeUndefined();
    expect(data.subarray(4 + length)).toEqual(bytes);

    const answer = Buffer.from([0x80, 0x81, 0x00, 0xff]);
    client.send(
      encodeFrame({ type: 'response', id: fields.id, status: 202, headers: { 'x-b': 'c' }, body: answer }, true),
    );
    const res = await sent;
    expect(res.status).toBe(202);
    expect(res.headers.get('x-b')).toBe('c');
    expect(Buffer.from(await res.arrayBuffer())).toEqual(answer);

    // A binary message whose length points past its end is a bad frame like any other, even when
    // what is there would parse.
    const closed = new Promise<number>((resolve) => client.once('close', (code) => resolve(code)));
    const json = Buffer.from(JSON.stringify({ type: 'response', id: fields.id, status: 200, headers: {} }));
    const truncated = Buffer.concat([Buffer.alloc(4), json]);
    truncated.writeUInt32BE(json.length + 10, 0);
    client.send(truncated);
    expect(await closed).toBe(1008);
  });

  it('holds at most a quarter of --max-buffer per channel and the whole of it in all, then answers 503 relay_busy', async () => {
    await relay.close();
    relay = await relayOn(0, { maxBody: 16 * 1024, maxBuffered: 64 * 1024 });
    const body = Buffer.alloc(12 * 1024, 'x');
    const busy = (res: { status: number; text: string; headers: Headers }) => [
      res.status,
      JSON.parse(res.text).error.code,
      res.headers.get('retry-after'),
    ];
    const listeners = await Promise.all(['g', 'h', 'i', 'j', 'k', 'm'].map(heldListener));
    const [first, second] = listeners;

    // 12 KiB held for the first channel; another 12 would pass its quarter (16 KiB).
    const held = post(first.publicUrl, body);
    await vi.waitFor(() => expect(first.requests).toHaveLength(1), eventually);
    expect(busy(await post(first.publicUrl, body))).toEqual([503, 'relay_busy', '2']);
    // Another channel is not starved by it.
    const other = post(second.publicUrl, body);
    await vi.waitFor(() => expect(second.requests).toHaveLength(1), eventually);

    // Five channels hold 60 KiB: a sixth body would pass the 64 KiB in all.
    const more = listeners.slice(2, 5).map((listener) => post(listener.publicUrl, body));
    await vi.waitFor(() => expect(listeners.slice(2, 5).map((l) => l.requests.length)).toEqual([1, 1, 1]), eventually);
    expect(busy(await post(listeners[5].publicUrl, body))).toEqual([503, 'relay_busy', '2']);

    // Answered, the bytes are free again.
    for (const listener of listeners) listener.answerAll();
    expect((await Promise.all([held, other, ...more])).map((res) => res.status)).toEqual([200, 200, 200, 200, 200]);
    const again = post(listeners[5].publicUrl, body);
    await vi.waitFor(() => expect(listeners[5].requests).toHaveLength(1), eventually);
    listeners[5].answerAll();
    expect((await again).status).toBe(200);
    for (const listener of listeners) listener.close();
  });

  it('gives the bytes of a refused body back as soon as it refuses it, not when its upload ends', async () => {
    await relay.close();
    relay = await relayOn(0, { maxBody: 16 * 1024, maxBuffered: 64 * 1024 });
    const listener = await heldListener('n');
    const pause = () => new Promise((resolve) => setTimeout(resolve, 100));
    // 12 KiB held of the channel's 16.
    const held = post(listener.publicUrl, Buffer.alloc(12 * 1024, 'x'));
    await vi.waitFor(() => expect(listener.requests).toHaveLength(1), eventually);
    // A sender that is refused half-way (3 KiB taken, the next 3 would pass 16) and then never finishes.
    const { connect } = await import('node:net');
    const slow = connect(relay.port, '127.0.0.1');
    slow.on('error', () => {});
    slow.write(`POST ${new URL(listener.publicUrl).pathname} HTTP/1.1\r\nHost: x\r\nContent-Length: 12288\r\n\r\n`);
    slow.write(Buffer.alloc(3 * 1024, 'y'));
    await pause();
    slow.write(Buffer.alloc(3 * 1024, 'y'));
    await pause();
    listener.answerAll();
    expect((await held).status).toBe(200);
    // 14 KiB fits again only if the slow sender's 3 KiB were given back when it was refused.
    const next = post(listener.publicUrl, Buffer.alloc(14 * 1024, 'z'));
    await vi.waitFor(() => expect(listener.requests).toHaveLength(1), eventually);
    listener.answerAll();
    expect((await next).status).toBe(200);
    slow.destroy();
    listener.close();
  });

  it('closes a client that sends a bad frame, and only that one', async () => {
    const proc = await listen();
    const { publicUrl, secret } = proc.ready;
    const rogueToken = 'r'.repeat(43);
    const rogue = new WebSocket(`${relay.url.replace('http', 'ws')}/connect`, {
      headers: { authorization: `Bearer ${rogueToken}` },
    });
    await new Promise((resolve) => rogue.once('message', resolve));
    const closed = new Promise<number>((resolve) => rogue.once('close', (code) => resolve(code)));
    rogue.send('{"type":"response","id":"nope"}');
    expect(await closed).toBe(1008);
    const body = envelope('evt_unaffected');
    expect((await post(publicUrl, body, signed(body, secret))).status).toBe(201);
  });

  it('gives up after --relay-give-up seconds without the relay, exit 1', async () => {
    const proc = await listen(dir.path, '--relay-give-up', '1');
    await relay.close();
    expect(await proc.exited).toBe(1);
    expect(proc.stderr).toContain('Gave up on the relay');
  });

  it('refuses to start when the relay cannot be reached, naming it', async () => {
    const url = relay.url;
    await relay.close();
    const res = await runCli(
      ['listen', '--port', '0', '--sandbox-port', '0', '--inspector-port', '0', '--relay', url, '--json'],
      { cwd: dir.path },
    );
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`could not connect to the relay at ${url}`);
    relay = await relayOn();
  });

  it('keeps the token in relay.json (0600) and derives the channel from it', async () => {
    const proc = await listen();
    const { readFile, stat } = await import('node:fs/promises');
    const file = join(dir.path, '.clockhook', 'relay.json');
    const record = JSON.parse(await readFile(file, 'utf8'));
    expect(record).toEqual({
      relay: relay.url,
      channel: channelFor(record.token),
      token: expect.stringMatching(/^[\w-]{43}$/),
      publicUrl: proc.ready.publicUrl,
    });
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(JSON.stringify(logs)).not.toContain(record.token);
  });

  it('gives the public URL of a relay used before back, with its endpoint, after a run on another relay', async () => {
    const first = await listen();
    await first.stop();
    const other = await relayOn();
    try {
      const elsewhere = await startListenProcess(
        ['--relay', other.url, '--forward-to', app.url, '--print-secret'],
        dir.path,
      );
      procs.push(elsewhere);
      expect(elsewhere.ready.publicUrl.startsWith(`${other.url}/c/`)).toBe(true);
      await elsewhere.stop();
    } finally {
      await other.close();
    }
    const back = await listen();
    expect(back.ready.publicUrl).toBe(first.ready.publicUrl);
    // The endpoint kept for that URL is the one used again: the app's secret still holds.
    expect(back.ready.secret).toBe(first.ready.secret);
    const record = JSON.parse(await readFile(join(dir.path, '.clockhook', 'relay.json'), 'utf8'));
    expect(record).toMatchObject({
      relay: relay.url,
      publicUrl: first.ready.publicUrl,
      earlier: [{ relay: other.url }],
    });
    expect(record.earlier).toHaveLength(1);
  });

  it('keeps the record of a relay another listen of the folder saved meanwhile', async () => {
    const path = join(dir.path, 'relay.json');
    const mine = await relayRecordFor(path, 'http://relay-a.test/');
    const theirs = await relayRecordFor(path, 'http://relay-b.test');
    await saveRelayRecord(path, { ...theirs, publicUrl: 'http://relay-b.test/c/b' });
    await saveRelayRecord(path, { ...mine, publicUrl: 'http://relay-a.test/c/a' });
    expect(await relayRecordFor(path, 'http://relay-b.test/')).toEqual({
      ...theirs,
      publicUrl: 'http://relay-b.test/c/b',
    });
    expect(await relayRecordFor(path, 'http://relay-a.test')).toEqual({
      ...mine,
      relay: 'http://relay-a.test',
      publicUrl: 'http://relay-a.test/c/a',
    });
  });

  it('moves an unreadable relay.json aside, never over it, and says the public URL is a new one', async () => {
    const { readdir, writeFile } = await import('node:fs/promises');
    const folder = join(dir.path, '.clockhook');
    await mkdir(folder, { recursive: true });
    // A hand edit gone wrong: the token is still in it, the only way back to the URL it names.
    const mangled = '{"relay": "http://old", "token": "keep-me-0123456789abcdefghijklmnop",\n';
    await writeFile(join(folder, 'relay.json'), mangled);
    const proc = await listen();
    const [aside] = (await readdir(folder)).filter((name) => name.startsWith('relay.json.corrupt-'));
    expect(await readFile(join(folder, aside), 'utf8')).toBe(mangled);
    expect(proc.stderr).toContain(`.clockhook/relay.json could not be read (it is not valid JSON`);
    expect(proc.stderr).toContain(
      `moved it to ${join('.clockhook', aside)}. This run gets a new channel, so a new public URL: the token in that file keeps the old one if you mend it.`,
    );
    const record = JSON.parse(await readFile(join(folder, 'relay.json'), 'utf8'));
    expect(record).toMatchObject({ relay: relay.url, publicUrl: proc.ready.publicUrl });
  });

  it('serves /healthz', async () => {
    const res = await fetch(`${relay.url}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true, channels: 0 });
  });
});

/** A WebSocket server standing in for a relay, for tests of the client; the test scripts its frames. */
async function startFakeRelay(): Promise<{ fake: WebSocketServer; relayUrl: string }> {
  const fake = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await new Promise((resolve) => fake.once('listening', resolve));
  return { fake, relayUrl: `http://127.0.0.1:${(fake.address() as { port: number }).port}` };
}

describe('a relay that serves TLS itself (--tls-cert, --tls-key)', () => {
  // test/fixtures/localhost-*.pem: a self-signed certificate for localhost and 127.0.0.1, for tests only.
  const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/${name}`, import.meta.url));
  const listenArgs = (relayUrl: string) => [
    'listen',
    '--port',
    '0',
    '--sandbox-port',
    '0',
    '--inspector-port',
    '0',
    '--relay',
    relayUrl,
    '--json',
  ];

  it('relays over https to a listener that trusts its certificate, and tells one that does not what to do', async () => {
    const tls = await relayOn(0, { tlsCert: fixture('localhost-cert.pem'), tlsKey: fixture('localhost-key.pem') });
    try {
      expect(tls.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
      const untrusted = await runCli(listenArgs(tls.url), { cwd: dir.path });
      expect(untrusted.code).toBe(1);
      expect(untrusted.stderr).toContain(
        `could not connect to the relay at ${tls.url}: self-signed certificate. This machine does not trust the relay's TLS certificate.`,
      );
      expect(untrusted.stderr).toContain('NODE_EXTRA_CA_CERTS=its-cert.pem npx clockhook listen --relay');

      const proc = await startListenProcess(['--relay', tls.url, '--forward-to', app.url, '--print-secret'], dir.path, {
        NODE_EXTRA_CA_CERTS: fixture('localhost-cert.pem'),
      });
      procs.push(proc);
      expect(proc.ready.publicUrl.startsWith(`${tls.url}/c/`)).toBe(true);
      const body = envelope('evt_over_tls');
      const ca = await readFile(fixture('localhost-cert.pem'));
      const answer = await new Promise<{ status: number; text: string }>((resolve, reject) => {
        const req = httpsRequest(
          proc.ready.publicUrl,
          { method: 'POST', ca, headers: { 'content-type': 'application/json', ...signed(body, proc.ready.secret) } },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (chunk: Buffer) => chunks.push(chunk));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
          },
        );
        req.on('error', reject);
        req.end(body);
      });
      expect(answer).toEqual({ status: 201, text: body });
      expect(app.received.at(-1)?.headers['x-forwarded-proto']).toBe('https');
    } finally {
      await tls.close();
    }
  });

  it('tells a listener given https:// for a relay that serves plain HTTP to give http://', async () => {
    const res = await runCli(listenArgs(relay.url.replace(/^http:/, 'https:')), { cwd: dir.path });
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(
      'the TLS handshake failed: the relay does not seem to speak TLS (is its address http://?). A relay that serves plain HTTP (no --tls-cert, no TLS proxy in front) is reached with --relay http://…',
    );
  });
});

describe('the relay client, against a relay that misbehaves', () => {
  // A version-1 relay: text frames, bodies in base64; the client answers in kind.
  it('ignores a malformed request frame, keeps the connection, and answers 502 when the handler throws', async () => {
    const { fake, relayUrl } = await startFakeRelay();
    const warnings: string[] = [];
    const handled: string[] = [];
    const answers: Record<string, unknown>[] = [];
    const gotAnswers = new Promise<void>((resolve) => {
      fake.on('connection', (socket) => {
        socket.on('message', (data) => {
          answers.push(JSON.parse(String(data)));
          if (answers.length === 2) resolve();
        });
        socket.send(JSON.stringify({ type: 'ready', channel: 'c', publicUrl: 'http://relay.test/c/c' }));
        socket.send(JSON.stringify({ type: 'request', id: 1, method: 'POST', path: '/', headers: null, body: '' }));
        socket.send(
          JSON.stringify({
            type: 'request',
            id: 2,
            method: 'POST',
            path: '/ok',
            headers: { 'x-a': 'b' },
            body: Buffer.from('hi').toString('base64'),
          }),
        );
        socket.send(JSON.stringify({ type: 'request', id: 3, method: 'POST', path: '/throws', headers: {}, body: '' }));
      });
    });
    const client = connectRelay({
      relayUrl,
      token: 't'.repeat(43),
      logger: { ...silentLogger, warn: (line: string) => warnings.push(line) },
      // Not async: it throws at once, which must not escape into the WebSocket's message handler.
      handle: (request) => {
        if (request.path === '/throws') throw new Error('boom');
        handled.push(`${request.path} ${request.headers['x-a']} ${request.body.toString()}`);
        return Promise.resolve({ status: 201, headers: { 'x-b': 'c' }, body: Buffer.from('done') });
      },
    });
    try {
      await client.ready;
      await gotAnswers;
      expect(handled).toEqual(['/ok b hi']);
      // In the order they complete, which is not the order they came in.
      answers.sort((a, b) => Number(a.id) - Number(b.id));
      expect(answers).toEqual([
        { type: 'response', id: 2, status: 201, headers: { 'x-b': 'c' }, body: Buffer.from('done').toString('base64') },
        expect.objectContaining({ type: 'response', id: 3, status: 502 }),
      ]);
      expect(Buffer.from(String(answers[1].body), 'base64').toString()).toContain('boom');
      expect(warnings.join('\n')).toMatch(/malformed request frame/);
    } finally {
      await client.close();
      fake.close();
    }
  });
});

describe('the relay client, refused by the relay', () => {
  it('says which record of relay.json to remove when the relay refuses its token (401)', async () => {
    const logger = recordingLogger();
    const client = connectRelay({
      relayUrl: `${relay.url}/`,
      token: 'too-short',
      logger,
      minBackoffMs: 60_000,
      handle: () => Promise.reject(new Error('unused')),
    });
    client.ready.catch(() => {});
    try {
      await vi.waitFor(() => expect(logger.errors).toHaveLength(1), eventually);
      expect(logger.errors[0]).toBe(
        `The relay at ${relay.url}/ refused the channel token (401). Remove its record ("relay": "${relay.url}") from .clockhook/relay.json to make a new one; the others there keep their relays' public URLs.`,
      );
    } finally {
      await client.close();
    }
  });
});

describe('the relay client, against a version-2 relay', () => {
  it('announces version 2, answers a binary request with a binary answer, and warns of a malformed one', async () => {
    const { fake, relayUrl } = await startFakeRelay();
    const warnings: string[] = [];
    const received: Buffer[] = [];
    let announced: string | string[] | undefined;
    const answered = new Promise<{ data: Buffer; isBinary: boolean }>((resolve) => {
      fake.on('connection', (socket, req) => {
        announced = req.headers[PROTOCOL_HEADER];
        socket.on('message', (data, isBinary) => resolve({ data: data as Buffer, isBinary }));
        socket.send(JSON.stringify({ type: 'ready', channel: 'c', publicUrl: 'http://relay.test/c/c' }));
        socket.send(Buffer.from([0, 0])); // too short to hold a length
        socket.send(
          encodeFrame(
            {
              type: 'request',
              id: 7,
              method: 'POST',
              path: '/bin',
              headers: { 'x-a': 'b' },
              body: Buffer.from([0xff, 0xfe, 0x00]),
            },
            true,
          ),
        );
      });
    });
    const client = connectRelay({
      relayUrl,
      token: 'v'.repeat(43),
      logger: { ...silentLogger, warn: (line: string) => warnings.push(line) },
      handle: (request) => {
        received.push(request.body);
        return Promise.resolve({ status: 200, headers: {}, body: Buffer.concat([request.body, Buffer.from([0x80])]) });
      },
    });
    try {
      await client.ready;
      const { data, isBinary } = await answered;
      expect(announced).toBe(PROTOCOL_VERSION);
      expect(received).toEqual([Buffer.from([0xff, 0xfe, 0x00])]);
      expect(isBinary).toBe(true);
      const length = data.readUInt32BE(0);
      expect(JSON.parse(data.toString('utf8', 4, 4 + length))).toEqual({
        type: 'response',
        id: 7,
        status: 200,
        headers: {},
      });
      expect(data.subarray(4 + length)).toEqual(Buffer.from([0xff, 0xfe, 0x00, 0x80]));
      expect(warnings).toEqual([expect.stringMatching(/malformed request frame/)]);
    } finally {
      await client.close();
      fake.close();
    }
  });
});

describe('clockhook relay (the command)', () => {
  it('prints a ready line and one line per relayed request, never bodies or tokens; exits 0 on SIGTERM', async () => {
    const { spawnCli } = await import('../helpers/cli.js');
    const proc = spawnCli(
      [
        'relay',
        '--port',
        '0',
        '--host',
        '127.0.0.1',
        '--public-url',
        'https://hooks.example.com',
        '--json',
        '--max-body',
        '1kb',
      ],
      { cwd: dir.path },
    );
    procs.push(proc);
    const ready = await proc.waitForLine((l) => l.event === 'ready');
    expect(ready).toEqual({
      event: 'ready',
      url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
      publicUrl: 'https://hooks.example.com',
    });
    const channel = channelFor('t'.repeat(43));
    const res = await post(`${ready.url}/c/${channel}/x?secret=abc`, 'body-text');
    expect(res.status).toBe(404);
    const line = await proc.waitForLine((l) => l.event === 'request');
    expect(line).toEqual({
      event: 'request',
      channel,
      method: 'POST',
      path: '/x',
      status: 404,
      durationMs: expect.any(Number),
    });
    expect(proc.lines.map((l) => JSON.stringify(l)).join('\n')).not.toMatch(/body-text|secret=abc/);
    expect(await proc.stop('SIGTERM')).toBe(0);
  });

  it('exits 1 at once, saying so, when its Redis cannot be reached', async () => {
    const port = await portForRestarts();
    const res = await runCli(['relay', '--port', '0', '--redis', `redis://127.0.0.1:${port}`], { cwd: dir.path });
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`could not reach Redis at redis://127.0.0.1:${port}`);
    expect(res.stderr).toContain('Is Redis running, and is --redis its URL?');
  });

  // Thirteen starts of the CLI in a row: seconds each on two busy cores.
  it('refuses bad flags with exit 2', async () => {
    for (const args of [
      ['--max-body', 'huge'],
      ['--max-buffer', 'lots'],
      ['--tls-cert', 'x.pem'],
      ['--public-url', 'not a url'],
      ['--port', '70000'],
    ]) {
      expect((await runCli(['relay', ...args], { cwd: dir.path })).code, args.join(' ')).toBe(2);
    }
    const refusals: [string[], string][] = [
      [
        ['--max-body', '0'],
        'clockhook: --max-body must be more than 0 bytes (got 0): every delivery would get 413. The default is 5mb.\n',
      ],
      [
        ['--public-url', 'https://hooks.example.com/?a'],
        'clockhook: --public-url https://hooks.example.com/?a has a query or fragment; give the base URL only, e.g. https://hooks.example.com\n',
      ],
      [
        ['--public-url', 'ftp://hooks.example.com'],
        'clockhook: --public-url ftp://hooks.example.com is not an http(s) URL; e.g. https://hooks.example.com\n',
      ],
      [
        ['--public-url', 'https://example.com/hooks'],
        "clockhook: --public-url https://example.com/hooks has a path; the relay serves listeners and deliveries at the root of its host, so give the origin only, e.g. https://example.com, and proxy that host name's root to it.\n",
      ],
      [
        ['--redis', 'localhost:6379'],
        'clockhook: --redis takes a Redis URL, e.g. redis://127.0.0.1:6379/0 (got localhost:6379).\n',
      ],
      [
        ['--redis', 'redis://127.0.0.1:6379', '--keys', 'keys.json'],
        'clockhook: --keys is for a relay without Redis: with --redis the keys are kept in Redis (relay keys add … --redis).\n',
      ],
    ];
    for (const [args, message] of refusals) {
      const res = await runCli(['relay', '--port', '0', ...args], { cwd: dir.path });
      expect(res, args.join(' ')).toMatchObject({ code: 2, stderr: message });
    }
    const small = await runCli(['relay', '--max-body', '10mb', '--max-buffer', '32mb'], { cwd: dir.path });
    expect(small).toMatchObject({ code: 2 }); // the whole result when not: its stderr says why
    expect(small.stderr).toContain('--max-buffer must be at least 4 × --max-body');
    expect(small.stderr).toContain('at least 40mb');
    const missing = await runCli(
      ['relay', '--port', '0', '--tls-cert', 'missing.pem', '--tls-key', 'missing-key.pem'],
      { cwd: dir.path },
    );
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(
      /^clockhook: cannot read the TLS file \S*missing(-key)?\.pem: no such file\. Give the PEM files/,
    );
  }, 60_000);
});
