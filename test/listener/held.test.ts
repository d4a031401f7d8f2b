import { afterEach, describe, expect, it } from 'vitest';
import { signPayload } from '../../src/contract/index.js';
import type { DeliveryReport } from '../../src/listener/index.js';
import { type ListenerRig, startListenerRig } from '../helpers/listener-rig.js';
import { SECRET, envelopeBody } from '../helpers/delivery.js';

let rig: ListenerRig | undefined;
afterEach(() => rig?.close());

function deliver(url: string, id: string, secret = SECRET): Promise<Response> {
  const body = envelopeBody(id, { created: 1 });
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-service-signature': signPayload({ payload: body, secret }) },
    body,
  });
}

describe('a listener held until its secret is known (listen binds its port before it registers the endpoint)', () => {
  it('holds what arrives meanwhile, then checks each with the secret it learned', async () => {
    const reports: DeliveryReport[] = [];
    rig = await startListenerRig({ held: true, onDelivery: (report) => reports.push(report) });
    const { listener, app, store } = rig;
    const valid = deliver(listener.url, 'evt_held_valid');
    const forged = deliver(listener.url, 'evt_held_forged', 'whsec_someone_else');
    await expect.poll(() => listener.waiting).toBe(2);
    expect(app.received).toHaveLength(0);
    expect(store.all()).toHaveLength(0);

    listener.setSecret(SECRET);
    listener.release();
    expect((await valid).status).toBe(200);
    expect((await forged).status).toBe(400);
    expect(app.received.map((r) => JSON.parse(r.body.toString()).id)).toEqual(['evt_held_valid']);
    expect(Object.fromEntries(reports.map((r) => [r.eventId, r.signature]))).toEqual({
      evt_held_valid: 'valid',
      evt_held_forged: 'invalid',
    });
    expect(listener.waiting).toBe(0);
    // Released, it holds nothing more.
    expect((await deliver(listener.url, 'evt_after')).status).toBe(200);
  });

  it('answers 503 to what it holds when it closes before it is released, capturing and forwarding nothing', async () => {
    rig = await startListenerRig({ held: true });
    const { listener, app, store } = rig;
    const waiting = deliver(listener.url, 'evt_held_closed');
    await expect.poll(() => listener.waiting).toBe(1);
    await listener.close(1_000);
    const answer = await waiting;
    expect(answer.status).toBe(503);
    expect(answer.headers.get('retry-after')).toBe('10');
    expect(await answer.json()).toMatchObject({ error: { code: 'listener_closing' } });
    expect(app.received).toHaveLength(0);
    expect(store.all()).toHaveLength(0);
  });
});
