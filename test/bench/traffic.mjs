// What the benchmark sends: signed envelopes of about 2 KB, as the service sends a punch with its relations.
// Each request is signed when it is sent (the service signs at delivery, and an old signature would be refused),
// with an event id of its own (real traffic), or one id repeated (a load test with a fixed body, a replay loop).
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { signPayload } from '../../dist/index.js';

export const SECRET = 'whsec_bench_secret_0123456789';

export function envelopeBody(id) {
  const data = {
    id: 910001,
    employeeId: 1001,
    type: 'in',
    punchedAt: '2026-11-20T14:00:12Z',
    locationId: 2001,
    note: '',
  };
  const envelope = {
    id,
    object: 'event',
    type: 'punch.created',
    api_version: '2026-11-01',
    created: Math.floor(Date.now() / 1000),
    data,
  };
  const base = JSON.stringify(envelope).length;
  data.note = 'x'.repeat(2048 - base); // a ~2 KB envelope, like a real punch with its relations
  return JSON.stringify(envelope);
}

export function signedHeaders(body, secret = SECRET) {
  return {
    'content-type': 'application/json',
    'x-service-event': 'punch.created',
    'x-service-signature': signPayload({ payload: body, secret }),
  };
}

let sent = 0;

/**
 * autocannon's `requests` for a kind of traffic: `unique`, each request a new event id; `repeated`, every
 * request the one id `evt_bench_repeated`. Each is signed with `secret` as it is sent.
 */
export function trafficRequests(kind, secret) {
  const run = `${process.pid.toString(36)}${Date.now().toString(36)}`;
  const repeated = envelopeBody('evt_bench_repeated');
  return [
    {
      method: 'POST',
      setupRequest(request) {
        const body = kind === 'repeated' ? repeated : envelopeBody(`evt_bench_${run}_${(sent++).toString(36)}`);
        return { ...request, body, headers: { ...request.headers, ...signedHeaders(body, secret) } };
      },
    },
  ];
}

/** A capture file with `count` captures of bench bodies (each its own event), as listen writes them. */
export async function fullStore(dir, count) {
  await mkdir(join(dir, '.clockhook'), { recursive: true, mode: 0o700 });
  const start = Date.now() - count * 10;
  const captures = Array.from({ length: count }, (_, i) => {
    const body = envelopeBody(`evt_old${i}`);
    return {
      id: `cap_${(start + i * 10).toString(36).padStart(9, '0')}000${i.toString(36).padStart(4, '0')}`,
      receivedAt: new Date(start + i * 10).toISOString(),
      source: 'delivery',
      method: 'POST',
      path: '/',
      headers: { host: '127.0.0.1', ...signedHeaders(body), 'content-length': String(body.length) },
      body,
      bodyEncoding: 'utf8',
      bodySize: body.length,
      signature: { status: 'valid', timestamp: Math.floor(start / 1000), ageSeconds: 0 },
      envelope: {
        id: `evt_old${i}`,
        type: 'punch.created',
        api_version: '2026-11-01',
        created: Math.floor(start / 1000),
      },
      contractProblems: [],
      kind: 'first',
      repeatOf: null,
      duplicateOf: null,
      rejected: null,
      forward: {
        target: 'http://127.0.0.1:3000/',
        statusCode: 200,
        headers: { 'content-type': 'application/json' },
        body: '{"ok":true}',
        bodyEncoding: 'utf8',
        durationMs: 1,
      },
    };
  });
  // As the store writes it: one capture per line.
  await writeFile(
    join(dir, '.clockhook', 'captures.json'),
    `{"version":1,"captures":[\n${captures.map((c) => JSON.stringify(c)).join(',\n')}\n]}`,
    { mode: 0o600 },
  );
}
