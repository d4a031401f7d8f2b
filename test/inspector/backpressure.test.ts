import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { type Inspector, startInspector } from '../../src/inspector/index.js';
import { newCaptureId } from '../../src/store/index.js';
import { connectClient, startInspectedSession } from '../helpers/inspector.js';

let t: Awaited<ReturnType<typeof startInspectedSession>>;
let inspector: Inspector;
let heartbeatInspector: Inspector;

const hub = (options: { maxBufferedBytes?: number; heartbeatMs?: number }) =>
  startInspector({
    port: 0,
    tokenPath: `${t.dir}/bp-token`,
    store: t.session.store,
    listener: t.session.listener,
    client: null,
    mode: 'offline',
    forwardTo: null,
    secretHint: null,
    getEndpoint: () => null,
    setEndpoint: () => {},
    ...options,
  });

beforeAll(async () => {
  t = await startInspectedSession({ secret: 'whsec_bp', forwardTo: null });
  inspector = await hub({ maxBufferedBytes: 256 * 1024 });
  heartbeatInspector = await hub({ heartbeatMs: 200 });
});
afterAll(async () => {
  await inspector.close();
  await heartbeatInspector.close();
  await t.close();
});

const wsUrl = (of: Inspector = inspector) => {
  const url = new URL(of.url);
  return `ws://${url.host}/ws?token=${url.searchParams.get('token')}`;
};

function capture(i: number) {
  return {
    id: newCaptureId(),
    receivedAt: new Date().toISOString(),
    source: 'delivery' as const,
    method: 'POST',
    path: '/',
    headers: {},
    body: `{"id":"evt_bp_${i}","pad":"${'p'.repeat(20_000)}"}`,
    bodyEncoding: 'utf8' as const,
    bodySize: 20_030,
    signature: { status: 'valid' as const },
    envelope: { id: `evt_bp_${i}`, type: 'punch.created', api_version: '2026-11-01', created: 1 },
    contractProblems: [],
    duplicateOf: null,
    rejected: null,
    forward: null,
  };
}

describe('inspector flow control', () => {
  it('stops sending captures to a page that does not read, then resyncs it with a snapshot', async () => {
    const client = await connectClient(wsUrl());
    await client.waitFor((m) => m.type === 'snapshot');
    const raw = (client.socket as unknown as { _socket: import('node:net').Socket })._socket;
    raw.pause(); // the page stops reading: its TCP window fills, the server's buffer grows
    for (let i = 0; i < 400; i++) {
      await t.session.store.add(capture(i));
      if (i % 20 === 0) await new Promise((r) => setTimeout(r, 25)); // let broadcasts go out
    }
    raw.resume();
    const resync = await client.waitFor((m) => m.type === 'snapshot' && m.resync === true);
    expect(resync.captures[0].envelope.id).toBe('evt_bp_399');
    // It did not get all 400 captures one by one: some were dropped for the resync instead.
    const live = client.messages.filter((m) => m.type === 'capture').length;
    expect(live).toBeLessThan(400);
    client.close();
  }, 20_000);

  it('terminates a page that stops answering pings', async () => {
    const socket = new WebSocket(wsUrl(heartbeatInspector), { autoPong: false });
    await new Promise((resolve) => socket.once('open', resolve));
    expect(heartbeatInspector.clients).toBe(1);
    const closed = await new Promise<number>((resolve) => socket.once('close', (code) => resolve(code)));
    expect(closed).toBe(1006); // terminated, not closed politely
    expect(heartbeatInspector.clients).toBe(0);
  });
});
