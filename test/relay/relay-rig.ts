// What the relay test files share: for each test a folder, an app that echoes the body with 201, and a relay
// on port 0 whose request logs are kept; the listen processes a test starts are killed after it. `dir`, `app`,
// `relay` and `logs` are live bindings, set anew before each test of a file that called useRelayRig().
import { afterEach, beforeEach } from 'vitest';
import WebSocket from 'ws';
import { signPayload } from '../../src/contract/index.js';
import { type RelayRequestLog, type RelayServer, startRelayServer } from '../../src/relay/index.js';
import { encodeFrame, PROTOCOL_HEADER, PROTOCOL_VERSION } from '../../src/relay/protocol.js';
import type { SpawnedCli } from '../helpers/cli.js';
import { startListenProcess } from '../helpers/listen.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { tempDir } from '../helpers/sandbox.js';
import { envelopeBody } from '../helpers/delivery.js';

export let dir: { path: string; remove: () => Promise<void> };
export let app: Receiver;
export let relay: RelayServer;
export let logs: RelayRequestLog[];
/** Listen processes started by a test (killed after it); push those started otherwise. */
export const procs: SpawnedCli[] = [];

export async function relayOn(port = 0, options: Parameters<typeof startRelayServer>[0] = {}) {
  return startRelayServer({
    port,
    host: '127.0.0.1',
    retryAfterSeconds: 2,
    onRequest: (log) => logs.push(log),
    ...options,
  });
}

export function useRelayRig(): void {
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
}

export async function listen(cwd = dir.path, ...extra: string[]) {
  const proc = await startListenProcess(
    ['--relay', relay.url, '--forward-to', app.url, '--print-secret', ...extra],
    cwd,
  );
  procs.push(proc);
  return proc;
}

export const envelope = (id: string) => envelopeBody(id, { data: { n: id } });
export const signed = (body: string | Buffer, secret: string) => ({
  'x-service-signature': signPayload({ payload: body, secret }),
});

/** A listener that answers only when told to. */
export async function heldListener(letter: string) {
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

/** The relay the file's helpers and cleanup use, for a test that starts another (closed after the test). */
export function useRelay(next: RelayServer): RelayServer {
  relay = next;
  return next;
}
