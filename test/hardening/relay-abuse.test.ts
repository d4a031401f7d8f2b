import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { channelFor, type RelayServer, startRelayServer } from '../../src/relay/index.js';
import { post } from '../helpers/listen.js';
import { sendRaw } from '../helpers/raw.js';

let relay: RelayServer;
const sockets: WebSocket[] = [];

beforeEach(async () => {
  relay = await startRelayServer({
    port: 0,
    host: '127.0.0.1',
    maxBody: 64 * 1024,
    maxInFlight: 20,
    responseTimeoutMs: 3000,
    requestTimeoutMs: 500,
    retryAfterSeconds: 1,
  });
});
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.terminate();
  await relay.close();
});

/** A raw listener on a channel: `answer` decides what it does with each relayed request. */
async function attach(token: string, answer: (frame: { id: number; body: string }, ws: WebSocket) => void) {
  const ws = new WebSocket(`${relay.url.replace('http', 'ws')}/connect`, {
    headers: { authorization: `Bearer ${token}` },
  });
  sockets.push(ws);
  await new Promise((resolve) => ws.once('message', resolve)); // ready
  ws.on('message', (data) => {
    const frame = JSON.parse(String(data));
    if (frame.type === 'request') answer(frame, ws);
  });
  return `${relay.url}/c/${channelFor(token)}`;
}

const echo = (frame: { id: number; body: string }, ws: WebSocket) =>
  ws.send(
    JSON.stringify({
      type: 'response',
      id: frame.id,
      status: 200,
      headers: { 'content-type': 'text/plain' },
      body: frame.body,
    }),
  );

describe('relay abuse leaves other channels alone', () => {
  it('a channel whose listener never answers, flooded, does not slow another channel', async () => {
    const stuck = await attach('s'.repeat(43), () => {}); // never answers
    const healthy = await attach('h'.repeat(43), echo);
    const flood = Array.from({ length: 200 }, () => post(stuck, 'x'));
    const started = performance.now();
    const good = await Promise.all(Array.from({ length: 20 }, (_, i) => post(healthy, `ok ${i}`)));
    expect(good.map((r) => r.text)).toEqual(Array.from({ length: 20 }, (_, i) => `ok ${i}`));
    // Well before the stuck requests' 3 s time-out: the healthy channel never waited behind them.
    expect(performance.now() - started).toBeLessThan(1500);
    const flooded = await Promise.all(flood);
    const counts = flooded.reduce<Record<number, number>>(
      (acc, r) => ({ ...acc, [r.status]: (acc[r.status] ?? 0) + 1 }),
      {},
    );
    expect(counts).toEqual({ 429: 180, 504: 20 }); // bounded: 20 in flight, the rest refused at once
  });

  it('unknown channels, forged tokens and oversize bodies are refused without touching a live channel', async () => {
    const live = await attach('l'.repeat(43), echo);
    expect((await post(`${relay.url}/c/${channelFor('nobody'.repeat(8))}`, 'x')).status).toBe(404);
    const forged = new WebSocket(`${relay.url.replace('http', 'ws')}/connect`, {
      headers: { authorization: `Bearer ${'f'.repeat(43)}`, 'x-clockhook-channel': channelFor('l'.repeat(43)) },
    });
    const refusal = await new Promise<number>((resolve) =>
      forged.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0)),
    );
    expect(refusal).toBe(401);
    expect((await post(live, Buffer.alloc(65 * 1024, 'b'))).status).toBe(413);
    expect((await post(live, 'still here')).text).toBe('still here');
  });

  it('a client sending garbage frames is closed; others keep working', async () => {
    const live = await attach('k'.repeat(43), echo);
    const rogue = new WebSocket(`${relay.url.replace('http', 'ws')}/connect`, {
      headers: { authorization: `Bearer ${'r'.repeat(43)}` },
    });
    sockets.push(rogue);
    await new Promise((resolve) => rogue.once('message', resolve));
    const closed = new Promise<number>((resolve) => rogue.once('close', resolve));
    rogue.send(Buffer.from([0, 1, 2, 3]));
    expect(await closed).toBe(1008);
    expect((await post(live, 'fine')).text).toBe('fine');
  });

  it('answers malformed HTTP and drops slow senders, memory staying bounded', async () => {
    const live = await attach('m'.repeat(43), echo);
    const port = Number(new URL(relay.url).port);
    expect((await sendRaw(port, ['garbage\r\n\r\n'])).status).toMatch(/^HTTP\/1\.1 400/);
    expect(
      (await sendRaw(port, [`POST /c/x HTTP/1.1\r\nHost: r\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`])).status,
    ).toMatch(/^HTTP\/1\.1 431/);
    const slow = await sendRaw(
      port,
      [
        'POST /c/x HTTP/1.1\r\n',
        'Host: r\r\n',
        'X-1: a\r\n',
        'X-2: a\r\n',
        'X-3: a\r\n',
        'X-4: a\r\n',
        'X-5: a\r\n',
        'X-6: a\r\n',
        'X-7: a\r\n',
        'X-8: a\r\n',
        'X-9: a\r\n',
        'X-10: a\r\n',
        'X-11: a\r\n',
        'X-12: a\r\n',
        'X-13: a\r\n',
        'X-14: a\r\n',
        'X-15: a\r\n',
        'X-16: a\r\n',
        'X-17: a\r\n',
        'X-18: a\r\n',
        'X-19: a\r\n',
        'X-20: a\r\n',
      ],
      { gapMs: 100, waitMs: 4000 },
    );
    expect(slow.closed).toBe(true);
    expect(slow.ms).toBeLessThan(2000);
    const before = process.memoryUsage().heapUsed;
    await Promise.all(Array.from({ length: 300 }, () => post(live, Buffer.alloc(60 * 1024, 'z'))));
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(100 * 1024 * 1024);
    expect((await post(live, 'after')).text).toBe('after');
  });
});
