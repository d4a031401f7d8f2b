// Listeners of a relay over its own protocol (version 2: binary requests and responses), written from the
// protocol's description in src/relay/protocol.ts rather than with its code: many in one process, for the
// relay's scale test and benchmark. Each answers every request 200 with the bytes it got.
import { randomBytes } from 'node:crypto';
import WebSocket from 'ws';

/** A binary message: a 4-byte big-endian length, the fields as JSON, then the body's bytes. */
function pack(fields, body) {
  const json = Buffer.from(JSON.stringify(fields));
  const length = Buffer.alloc(4);
  length.writeUInt32BE(json.length, 0);
  return Buffer.concat([length, json, body]);
}

function unpack(bytes) {
  const length = bytes.readUInt32BE(0);
  return { fields: JSON.parse(bytes.toString('utf8', 4, 4 + length)), body: bytes.subarray(4 + length) };
}

/**
 * One listener on `relayUrl`: resolves once the relay said its channel is ready, with its socket, its public
 * URL, and `answered` (the requests it answered).
 */
export function connectFakeListener(relayUrl) {
  const token = randomBytes(32).toString('base64url');
  const ws = new WebSocket(`${relayUrl.replace(/^http/, 'ws')}/connect`, {
    headers: { authorization: `Bearer ${token}`, 'x-clockhook-relay-protocol': '2' },
    perMessageDeflate: false,
  });
  const listener = { ws, publicUrl: '', channel: '', answered: 0 };
  ws.on('message', (data, isBinary) => {
    if (!isBinary) return;
    const { fields, body } = unpack(data);
    if (fields.type !== 'request') return;
    listener.answered += 1;
    ws.send(pack({ type: 'response', id: fields.id, status: 200, headers: {} }, body));
  });
  ws.on('error', () => {});
  return new Promise((resolve, reject) => {
    ws.once('message', (data) => {
      const ready = JSON.parse(String(data));
      Object.assign(listener, { publicUrl: ready.publicUrl, channel: ready.channel });
      resolve(listener);
    });
    ws.once('unexpected-response', (_req, res) => reject(new Error(`the relay answered ${res.statusCode}`)));
    ws.once('close', () => reject(new Error('the relay closed the connection before its channel was ready')));
  });
}

/** `count` listeners, connected `batch` at a time; `relayUrls` take turns (listeners spread over instances). */
export async function connectFakeListeners(relayUrls, count, { batch = 250 } = {}) {
  const urls = [relayUrls].flat();
  const listeners = [];
  for (let i = 0; i < count; i += batch) {
    const size = Math.min(batch, count - i);
    const connected = await Promise.all(
      Array.from({ length: size }, (_, j) => connectFakeListener(urls[(i + j) % urls.length])),
    );
    listeners.push(...connected);
  }
  return {
    listeners,
    close: () => {
      for (const listener of listeners) listener.ws.terminate();
    },
  };
}
