// relay and listen --relay: late answers, binary messages, the buffer's bounds and bad frames.
import { describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import { encodeFrame, PROTOCOL_HEADER, PROTOCOL_VERSION } from '../../src/relay/protocol.js';
import { post } from '../helpers/listen.js';
import { eventually } from '../helpers/eventually.js';
import { envelope, heldListener, listen, relay, relayOn, signed, useRelay, useRelayRig } from './relay-rig.js';

useRelayRig();

describe('relay and listen --relay: answers, bytes and bounds', () => {
  it('never gives a late answer to the request that came after it', async () => {
    await relay.close();
    useRelay(await relayOn(0, { maxInFlight: 1, responseTimeoutMs: 300 }));
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
    useRelay(await relayOn(0, { maxBody: 16 * 1024, maxBuffered: 64 * 1024 }));
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
    useRelay(await relayOn(0, { maxBody: 16 * 1024, maxBuffered: 64 * 1024 }));
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
});
