import { describe, expect, it } from 'vitest';
import { ApiClient, deliveryOutlook, type EndpointState, readDeliveryOutlook } from '../../src/api/index.js';
import { outlookLines } from '../../src/cli/events.js';
import type { DeliveryAttempt, EventRecord } from '../../src/contract/index.js';
import { startScriptedServer } from '../helpers/scripted-server.js';

const attempt = (fields: Partial<DeliveryAttempt>): DeliveryAttempt => ({
  attempt: 1,
  endpointId: 1,
  statusCode: 500,
  responseBody: '',
  durationMs: 3,
  error: null,
  createdAt: '2026-11-22T10:00:00.000Z',
  ...fields,
});
const event = (attempts: DeliveryAttempt[]) => ({ id: 'evt_1', delivery_attempts: attempts }) as unknown as EventRecord;
const at = (iso: string) => Date.parse(iso);
/** What `events get` prints under the attempts, at `now`. */
const outlook = (record: EventRecord, { now, endpoints }: { now: number; endpoints?: Map<number, EndpointState> }) =>
  outlookLines(record.id, deliveryOutlook(record, { endpoints }), { now, timeScale: 1 });

describe('deliveryOutlook: what the service does next, by its retry policy', () => {
  it('gives the time the next attempt is due, and says once that time has passed that it shows when done', () => {
    const failedOnce = event([attempt({ attempt: 3 })]);
    expect(outlook(failedOnce, { now: at('2026-11-22T10:10:00Z') })[0]).toBe(
      "Endpoint 1: attempt 4 of 5 is due at about 2026-11-22T10:30:00Z, 30 min after attempt 3 (the service's retry policy).",
    );
    expect(outlook(failedOnce, { now: at('2026-11-22T10:31:00Z') })[0]).toBe(
      "Endpoint 1: attempt 4 of 5 was due at about 2026-11-22T10:30:00Z, 30 min after attempt 3 (the service's retry policy); it shows here once it completes.",
    );
  });

  it('has nothing to say of an endpoint whose latest attempt was answered 2xx, a redelivery included', () => {
    const redelivered = event([
      attempt({ attempt: 5, endpointId: 1 }),
      attempt({ attempt: 1, endpointId: 1, statusCode: 204 }),
      attempt({ attempt: 1, endpointId: 2, statusCode: 200 }),
    ]);
    expect(outlook(redelivered, { now: at('2026-11-22T10:00:01Z') })).toEqual([]);
  });

  it('speaks of each failing endpoint, then names the command that sends the event again once', () => {
    const two = event([
      attempt({ endpointId: 1, statusCode: null, error: 'connection refused' }),
      attempt({ endpointId: 2, attempt: 4 }),
      attempt({ endpointId: 3, statusCode: 200 }),
    ]);
    expect(outlook(two, { now: at('2026-11-22T10:00:01Z') })).toEqual([
      "Endpoint 1: attempt 2 of 5 is due at about 2026-11-22T10:01:00Z, 1 min after attempt 1 (the service's retry policy).",
      "Endpoint 2: attempt 5 of 5 is due at about 2026-11-22T12:00:00Z, 2 h after attempt 4 (the service's retry policy).",
      'To send the event again now, to every endpoint subscribed to it (retries already scheduled still come): npx clockhook events redeliver evt_1',
    ]);
  });

  it('promises no time to an endpoint that is disabled or deleted', () => {
    const three = event([attempt({ endpointId: 1 }), attempt({ endpointId: 2 }), attempt({ endpointId: 3 })]);
    const endpoints = new Map([
      [1, 'disabled' as const],
      [2, 'deleted' as const],
      [3, 'unknown' as const],
    ]);
    expect(outlook(three, { now: at('2026-11-22T10:00:01Z'), endpoints }).slice(0, 3)).toEqual([
      'Endpoint 1 is disabled, and a disabled endpoint is excluded from deliveries: no more attempts come while it is. "npx clockhook endpoints enable 1" enables it.',
      'Endpoint 2 no longer exists: nothing more is sent to it.',
      "Endpoint 3: attempt 2 of 5 is due at about 2026-11-22T10:01:00Z, 1 min after attempt 1 (the service's retry policy).",
    ]);
    // A ping's retries reach a disabled endpoint all the same.
    const ping = { ...event([attempt({ endpointId: 1 })]), type: 'webhook_endpoint.ping' } as EventRecord;
    expect(outlook(ping, { now: at('2026-11-22T10:00:01Z'), endpoints })[0]).toMatch(
      /^Endpoint 1: attempt 2 of 5 is due/,
    );
  });

  it('says nothing of an attempt whose number the service did not give (the contract does not show the field names)', () => {
    const unnumbered = event([attempt({ attempt: undefined as unknown as number })]);
    expect(outlook(unnumbered, { now: at('2026-11-22T10:00:01Z') })).toEqual([]);
    expect(
      outlook(unnumbered, { now: at('2026-11-22T10:00:01Z'), endpoints: new Map([[1, 'disabled' as const]]) })[0],
    ).toMatch(/^Endpoint 1 is disabled/);
  });

  it('reads the state of each failing endpoint named by its id, and of no other', async () => {
    const server = await startScriptedServer([
      { status: 200, body: { id: 7, url: 'https://example.com/h', enabledEvents: ['*'], status: 'disabled' } },
    ]);
    try {
      const client = new ApiClient({ baseUrl: server.url, apiKey: 'tt_live_testkey' });
      const record = event([
        attempt({ endpointId: 7 }),
        attempt({ endpointId: 'https://example.com/other' as unknown as number }),
        attempt({ endpointId: 8, statusCode: 200 }),
      ]);
      const read = await readDeliveryOutlook(client, record);
      expect(server.requests.map((r) => r.url)).toEqual(['/webhookEndpoint/7']);
      expect(read[0]).toEqual({ endpointId: 7, next: 'none', reason: 'disabled' });
    } finally {
      await server.close();
    }
  });
});
