// What the listen-with-a-known-secret test files share: each test a folder of its own and an app that answers
// 201 with JSON, and `start`, which runs listen there with SECRET; the listen a test started is killed after
// it. `dir`, `app` and `listen` are live bindings, set anew for each test of a file that called useDirectListen().
import { afterEach, beforeEach } from 'vitest';
import { signPayload } from '../../src/contract/index.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { startListenProcess } from '../helpers/listen.js';
import { tempDir } from '../helpers/sandbox.js';
import { envelopeBody } from '../helpers/delivery.js';

export const SECRET = 'whsec_direct_test_secret';
export const ENVELOPE = envelopeBody('evt_direct1', { data: { id: 1, note: 'Zoë' } });

export let dir: { path: string; remove: () => Promise<void> };
export let app: Receiver;
export let listen: Awaited<ReturnType<typeof startListenProcess>> | undefined;

export function useDirectListen(): void {
  beforeEach(async () => {
    dir = await tempDir();
    app = await startReceiver((_r, res) => {
      res.writeHead(201, { 'content-type': 'application/json', 'x-app': 'yes' });
      res.end('{"handled":true}');
    });
  });
  afterEach(async () => {
    await listen?.stop('SIGKILL');
    listen = undefined;
    await app.close();
    await dir.remove();
  });
}

export const signed = (body: string | Buffer, timestamp?: number) => ({
  'x-service-signature': signPayload({ payload: body, secret: SECRET, timestamp }),
});

/** listen with SECRET in the test's folder. */
export async function start(...args: string[]) {
  listen = await startListenProcess(['--secret', SECRET, ...args], dir.path);
  return listen;
}
