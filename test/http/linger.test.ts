import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerEarly } from '../../src/http/index.js';
import { silentLogger } from '../../src/logger.js';
import { connectRelay, type RelayClient, type RelayServer, startRelayServer } from '../../src/relay/index.js';
import { type ListenerRig, startListenerRig } from '../helpers/listener-rig.js';

/**
 * A sender still sending when it is refused early (413, 503) must read the answer, not EPIPE: the
 * relay and the listener answer, read and drop the rest for a bounded while, then close (nginx's
 * lingering close). The sender writes as fast as the socket takes it, then reads.
 */
function sendLarge(
  port: number,
  path: string,
  size: number,
  { chunked = false, paceMs = 0 } = {},
): Promise<{ response: string; error: string | null; ms: number }> {
  return new Promise((resolve) => {
    const started = Date.now();
    // allowHalfOpen: a sender keeps sending after the server's FIN, as an uploading client does.
    const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    let response = '';
    let error: string | null = null;
    socket.on('data', (chunk: Buffer) => (response += chunk.toString('latin1')));
    socket.on('error', (e: NodeJS.ErrnoException) => (error = e.code ?? e.message));
    socket.on('close', () => resolve({ response, error, ms: Date.now() - started }));
    const length = chunked ? 'transfer-encoding: chunked' : `content-length: ${size}`;
    socket.write(`POST ${path} HTTP/1.1\r\nhost: test\r\ncontent-type: application/json\r\n${length}\r\n\r\n`);
    const piece = Buffer.alloc(64 * 1024, 0x61);
    let sent = 0;
    const step = () => {
      while (sent < size && !socket.destroyed) {
        const n = Math.min(paceMs ? 1024 : piece.length, size - sent);
        sent += n;
        const frame = chunked
          ? Buffer.concat([Buffer.from(`${n.toString(16)}\r\n`), piece.subarray(0, n), Buffer.from('\r\n')])
          : piece.subarray(0, n);
        if (!socket.write(frame)) return void socket.once('drain', step);
        if (paceMs) return void setTimeout(step, paceMs);
      }
      if (!socket.destroyed) socket.end(chunked ? '0\r\n\r\n' : '');
    };
    step();
  });
}

let relay: RelayServer;
let client: RelayClient;
let channelPath: string;
let rig: ListenerRig;

beforeAll(async () => {
  relay = await startRelayServer({ port: 0, host: '127.0.0.1', maxBody: 1024 * 1024, maxBuffered: 4 * 1024 * 1024 });
  client = connectRelay({
    relayUrl: relay.url,
    token: randomBytes(32).toString('base64url'),
    logger: silentLogger,
    handle: async () => ({ status: 200, headers: {}, body: Buffer.from('ok') }),
  });
  channelPath = new URL(await client.ready).pathname;
  rig = await startListenerRig({ maxBodyBytes: 1024 * 1024 });
});
afterAll(async () => {
  await client.close();
  await relay.close();
  await rig.close();
});

describe('lingering close after an early refusal', () => {
  // 2 MiB, as a sender would try, and 16 MiB: more than the loopback's socket buffers hold, so that a
  // connection closed at once reaches the sender while it is still writing.
  it('lets a sender of 2 or 16 MiB read the relay’s 413 (over --max-body 1mb), with or without a Content-Length', async () => {
    for (const [size, chunked] of [
      [2, false],
      [16, false],
      [16, true],
    ] as const) {
      const sent = await sendLarge(relay.port, channelPath, size * 1024 * 1024, { chunked });
      expect(sent.error).toBeNull();
      expect(sent.response).toMatch(/^HTTP\/1\.1 413 /);
      expect(sent.response.toLowerCase()).toContain('connection: close');
      expect(sent.response).toContain('payload_too_large');
    }
    // The channel goes on.
    expect((await fetch(`${relay.url}${channelPath}`, { method: 'POST', body: 'x' })).status).toBe(200);
  });

  it('lets a sender read the relay’s 404 for an unknown channel while it is still sending', async () => {
    const sent = await sendLarge(relay.port, `/c/${'x'.repeat(32)}`, 16 * 1024 * 1024);
    expect(sent.error).toBeNull();
    expect(sent.response).toMatch(/^HTTP\/1\.1 404 /);
  });

  it('lets a sender of 16 MiB read the listener’s 413', async () => {
    const port = Number(new URL(rig.listener.url).port);
    const sent = await sendLarge(port, '/', 16 * 1024 * 1024);
    expect(sent.error).toBeNull();
    expect(sent.response).toMatch(/^HTTP\/1\.1 413 /);
  });

  describe('is bounded', () => {
    let server: Server;
    let port: number;
    beforeAll(async () => {
      server = createServer((req, res) =>
        answerEarly(req, res, 413, 'payload_too_large', 'too large', { linger: { maxBytes: 256 * 1024, maxMs: 500 } }),
      );
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      port = (server.address() as { port: number }).port;
    });
    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

    it('in bytes: past them the connection is cut, the answer already sent', async () => {
      const sent = await sendLarge(port, '/', 64 * 1024 * 1024);
      expect(sent.response).toMatch(/^HTTP\/1\.1 413 /);
      expect(sent.error).not.toBeNull();
    });

    it('in time: a sender that goes on sending is cut after it', async () => {
      // 1 KiB every 10 ms: far under the bytes, so the time (500 ms) is what ends it.
      const sent = await sendLarge(port, '/', 64 * 1024 * 1024, { chunked: true, paceMs: 10 });
      expect(sent.response).toMatch(/^HTTP\/1\.1 413 /);
      expect(sent.ms).toBeGreaterThanOrEqual(400);
      expect(sent.ms).toBeLessThan(5000);
    });
  });
});
