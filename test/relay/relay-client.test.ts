// The relay client against relays that misbehave, refuse it, or speak version 2.
import { describe, expect, it, vi } from 'vitest';
import { WebSocketServer } from 'ws';
import { silentLogger } from '../../src/logger.js';
import { connectRelay } from '../../src/relay/index.js';
import { encodeFrame, PROTOCOL_HEADER, PROTOCOL_VERSION } from '../../src/relay/protocol.js';
import { eventually } from '../helpers/eventually.js';
import { recordingLogger } from '../helpers/logger.js';
import { relay, useRelayRig } from './relay-rig.js';

useRelayRig();

/** A WebSocket server standing in for a relay, for tests of the client; the test scripts its frames. */
async function startFakeRelay(): Promise<{ fake: WebSocketServer; relayUrl: string }> {
  const fake = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await new Promise((resolve) => fake.once('listening', resolve));
  return { fake, relayUrl: `http://127.0.0.1:${(fake.address() as { port: number }).port}` };
}

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
