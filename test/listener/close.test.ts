import type { ServerResponse } from 'node:http';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { signPayload } from '../../src/contract/index.js';
import type { Listener } from '../../src/listener/index.js';
import type { CaptureStore } from '../../src/store/index.js';
import type { Receiver } from '../helpers/receiver.js';
import { type ListenerRig, startListenerRig } from '../helpers/listener-rig.js';
import { SECRET, envelopeBody } from '../helpers/delivery.js';

let rig: ListenerRig;
let app: Receiver;
let store: CaptureStore;
let listener: Listener;
/** The app's answers by event id, held until a test lets them go. */
let held: Map<string, ServerResponse>;

beforeEach(async () => {
  held = new Map();
  rig = await startListenerRig({
    respond: (request, res) => held.set(JSON.parse(request.body.toString()).id, res),
    secret: SECRET,
  });
  ({ app, store, listener } = rig);
});
afterEach(() => rig.close());

function deliver(id: string): Promise<Response> {
  const body = envelopeBody(id, { created: 1 });
  return fetch(listener.url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-service-signature': signPayload({ payload: body, secret: SECRET }),
    },
    body,
  });
}

function release(eventId: string): void {
  const res = held.get(eventId);
  if (!res) throw new Error(`the app has no request for ${eventId}`);
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end('{"ok":true}');
}

describe('closing the listener', () => {
  it('lets every delivery in flight get its answer before it resolves', async () => {
    const first = deliver('evt_close_1');
    const second = deliver('evt_close_2');
    await app.waitFor(2);
    let closed = false;
    const closing = listener.close(10_000).then(() => {
      closed = true;
    });

    release('evt_close_1');
    expect((await first).status).toBe(200);
    expect(closed).toBe(false); // the second is still waiting for the app

    release('evt_close_2');
    expect((await second).status).toBe(200);
    await closing;
    expect(
      store
        .all()
        .map((c) => c.envelope?.id)
        .sort(),
    ).toEqual(['evt_close_1', 'evt_close_2']);
  });

  it('drops what is still in flight once the grace period is over, keeping the captures', async () => {
    const stuck = deliver('evt_close_stuck');
    await app.waitFor(1);
    await listener.close(50);
    await expect(stuck).rejects.toThrow();
    expect(store.all().map((c) => c.envelope?.id)).toEqual(['evt_close_stuck']);
  });

  it('does not wait out the grace period once every delivery is answered', async () => {
    const done = deliver('evt_close_done');
    await app.waitFor(1);
    release('evt_close_done');
    expect((await done).status).toBe(200);
    // A count left above zero would hold this for a minute, past the test's time limit.
    await listener.close(60_000);
  });
});
