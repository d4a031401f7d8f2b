import { randomBytes } from 'node:crypto';
import { PING_EVENT_TYPE, sampleData, signPayload, LIMITS } from '../contract/index.js';
import { shownUrl } from '../http/index.js';
import { acceptance, type Battery, CONTRACT_LIMIT_MS, SLOW_WARN_MS, TargetUnreachableError } from './battery.js';
import { type Answer, describeAnswer, is2xx, is5xx } from './send.js';
import type { CheckStatus } from './types.js';

/** 1. A valid delivery of each type; the first also tells whether anything answers at all. */
export async function checkValidDeliveries(b: Battery, events: string[]): Promise<void> {
  for (const [index, type] of events.entries()) {
    const env = b.envelope(type);
    const answer = await b.deliver(env);
    if (
      index === 0 &&
      answer.kind === 'error' &&
      ['ECONNREFUSED', 'ENOTFOUND', 'EHOSTUNREACH'].includes(answer.code ?? '')
    ) {
      throw new TargetUnreachableError(
        `nothing answers at ${shownUrl(b.options.target)} (${answer.error}). Start your app, or give the URL it answers at (${b.options.words.target('<url>')}).`,
      );
    }
    b.record({
      id: `valid:${type}`,
      name: `valid ${type} delivery is accepted`,
      sent: `${type} ${env.id}, correctly signed`,
      got: describeAnswer(answer),
      ...acceptance(
        answer,
        `Answer 2xx to every delivery whose signature verifies; a non-2xx makes the service retry and, after ${LIMITS.consecutiveFailuresToDisable} failed deliveries, disable the endpoint. Unknown fields in data must not fail the handler.`,
        b.options,
      ),
    });
  }
}

/** The raw body, not re-serialized JSON: the same envelope with whitespace, as some senders format it. */
export async function checkRawBody(b: Battery, type: string): Promise<void> {
  const env = b.envelope(type);
  const answer = await b.deliver(env, { body: Buffer.from(JSON.stringify(env, null, 2)) });
  b.record({
    id: 'raw-body',
    name: 'signature is checked over the raw bytes',
    sent: 'a correctly signed envelope formatted with whitespace and newlines',
    got: describeAnswer(answer),
    ...acceptance(
      answer,
      'Verify the HMAC over the raw request bytes exactly as received (a Buffer), before any JSON parsing. Parsing and re-serializing changes the bytes, and the signature no longer matches.',
      b.options,
    ),
  });
}

/** Records a check that the app must refuse: 2xx is a failure, and so is a crash (5xx, reset). */
function recordRejection(b: Battery, id: string, name: string, sent: string, answer: Answer, hint: string): void {
  const accepted = is2xx(answer);
  const crashed = is5xx(answer) || (answer.kind === 'error' && answer.code !== 'TIMEOUT');
  b.record({
    id,
    name,
    status: accepted || crashed ? 'fail' : 'pass',
    sent,
    got: describeAnswer(answer),
    ...(accepted
      ? { hint }
      : crashed
        ? {
            hint: 'Reject it with a 4xx (400 or 401); do not crash. A 5xx tells the service to retry a forged request.',
          }
        : {}),
  });
}

/** 2-4. Forged and broken signatures. */
export async function checkForgeries(b: Battery): Promise<void> {
  const { secret, now } = b.options;
  const env = b.envelope('punch.created');
  const raw = Buffer.from(JSON.stringify(env));
  const t = Math.floor(now() / 1000);

  const wrong = signPayload({ payload: raw, secret: `whsec_${randomBytes(16).toString('hex')}`, timestamp: t });
  recordRejection(
    b,
    'wrong-secret',
    'a signature made with another secret is rejected',
    'an envelope signed with a different secret',
    await b.deliver(env, { header: wrong }),
    'Verify X-Service-Signature with your endpoint secret and reject on mismatch: anyone can POST to your URL.',
  );

  const tampered = Buffer.from(raw);
  const at = raw.indexOf('"created":') + '"created":'.length;
  tampered[at] = tampered[at] === 0x31 ? 0x32 : 0x31; // one digit of created
  const original = signPayload({ payload: raw, secret, timestamp: t });
  recordRejection(
    b,
    'tampered-body',
    'a body changed after signing is rejected',
    'a signed envelope with one byte changed afterwards',
    await b.deliver(env, { body: tampered, header: original }),
    'Compute the HMAC over "<t>.<raw body>" and compare it to v1; an accepted tampered body means the signature is not checked against the body.',
  );

  recordRejection(
    b,
    'missing-header',
    'a delivery without X-Service-Signature is rejected',
    'a valid envelope with no signature header',
    await b.deliver(env, { header: null }),
    'Reject requests without X-Service-Signature.',
  );
  const digest = original.split('v1=')[1];
  recordRejection(
    b,
    'malformed-no-t',
    'a signature header without t is rejected',
    `X-Service-Signature: v1=${digest.slice(0, 8)}…`,
    await b.deliver(env, { header: `v1=${digest}` }),
    'A header without t=<unix seconds> is malformed: reject it.',
  );
  recordRejection(
    b,
    'malformed-bad-t',
    'a signature header with a non-numeric t is rejected',
    'X-Service-Signature: t=yesterday,v1=…',
    await b.deliver(env, { header: `t=yesterday,v1=${digest}` }),
    'A t that is not a number is malformed: reject it (and do not crash on it).',
  );
}

/** 5. Replay protection: optional in the contract, so accepting is a warning, not a failure. */
export async function checkStaleTimestamp(b: Battery): Promise<void> {
  const answer = await b.deliver(b.envelope('punch.created'), { timestamp: Math.floor(b.options.now() / 1000) - 600 });
  const crashed = is5xx(answer);
  b.record({
    id: 'stale-timestamp',
    name: 'a signature 10 minutes old is rejected (replay protection)',
    status: is2xx(answer) ? 'warn' : crashed ? 'fail' : 'pass',
    sent: 'a correctly signed envelope with t 600 s in the past',
    got: describeAnswer(answer),
    ...(is2xx(answer)
      ? {
          hint: `Reject signatures whose t is more than ${LIMITS.replayWindowSeconds} s from now, so a captured delivery cannot be replayed later. The contract makes this optional, hence a warning.`,
        }
      : {}),
    ...(crashed ? { hint: 'Reject it with a 4xx; do not crash.' } : {}),
  });
}

/** 6. The same event twice: accepted both times, processed once (as far as the app lets us see). */
export async function checkDuplicate(b: Battery): Promise<void> {
  const env = b.envelope('employee.created');
  const first = await b.deliver(env);
  const second = await b.deliver(env);
  const base = { id: 'duplicate', name: 'a repeated event id is accepted and processed once', sent: `${env.id} twice` };
  const got = `${describeAnswer(first)}; then ${describeAnswer(second)}`;
  if (!is2xx(first) || !is2xx(second)) {
    b.record({
      ...base,
      status: 'fail',
      got,
      hint: 'Answer 2xx to a repeated delivery too (the service can send an event more than once) and skip the work: deduplicate on the envelope id.',
    });
    return;
  }
  const { dedupeProbe } = b.options;
  if (!dedupeProbe) {
    b.record({
      ...base,
      status: 'warn',
      got: `${got}; cannot tell whether it deduplicated`,
      hint: `Store or log each envelope id and skip ids already seen. ${b.options.words.dedupeProbe} to have this checked.`,
    });
    return;
  }
  const count = await probe(dedupeProbe, env.id, b.options.timeoutMs);
  b.record({
    ...base,
    status: count === 1 ? 'pass' : 'fail',
    got: `${got}; the probe says processed ${count ?? 'unknown'} time(s)`,
    ...(count === 1
      ? {}
      : {
          hint:
            count === null
              ? 'The dedupe probe must answer a number, or JSON with a count.'
              : 'Deduplicate on the envelope id: process an id once, answer 2xx to the repeats.',
        }),
  });
}

/** 8. The contract's envelope, read per event: a newer api_version and new data fields are accepted. */
export async function checkEnvelopeVersion(b: Battery): Promise<void> {
  const env = b.envelope(
    'punch.created',
    { ...sampleData('punch.created'), fieldAddedLater: { nested: true } },
    '2099-01-01',
  );
  const answer = await b.deliver(env);
  b.record({
    id: 'envelope',
    name: 'the contract envelope with a newer api_version and new data fields is accepted',
    sent: `{ id: "${env.id}", object: "event", type, api_version: "2099-01-01", created, data: sample resource + one new field }`,
    got: describeAnswer(answer),
    ...acceptance(
      answer,
      'Read api_version per event instead of rejecting versions you do not know, and ignore fields you do not use: the service may raise its version.',
      b.options,
    ),
  });
}

/** 9. The ping diagnostic. */
export async function checkPing(b: Battery): Promise<void> {
  const env = b.envelope(PING_EVENT_TYPE, {
    object: 'webhook_endpoint',
    id: 1,
    url: shownUrl(b.options.target),
    status: 'enabled',
  });
  const answer = await b.deliver(env);
  b.record({
    id: 'ping',
    name: 'a webhook_endpoint.ping delivery is accepted',
    sent: `${PING_EVENT_TYPE} with X-Service-Event, correctly signed`,
    got: describeAnswer(answer),
    ...acceptance(
      answer,
      'Answer 2xx to event types you do not handle, webhook_endpoint.ping included; rejecting them breaks the ping diagnostic.',
      b.options,
    ),
  });
}

/** 7. Response time, over everything sent. */
export function checkResponseTime(b: Battery): void {
  const slowest = Math.max(...b.durations);
  const { timeoutMs, slowMs = SLOW_WARN_MS } = b.options;
  const status: CheckStatus =
    slowest >= CONTRACT_LIMIT_MS || slowest >= timeoutMs ? 'fail' : slowest > slowMs ? 'warn' : 'pass';
  b.record({
    id: 'response-time',
    name: 'every answer comes within 10 s (the service gives up at 30 s)',
    status,
    sent: `${b.durations.length} requests`,
    got: `slowest answer ${slowest} ms`,
    ...(status === 'pass'
      ? {}
      : {
          hint: `Answer 2xx first and do the work afterwards (a queue, a background job): the service counts an answer after ${LIMITS.receiverTimeoutMs / 1000} s as a failed attempt.`,
        }),
  });
}

async function probe(url: URL, id: string, timeoutMs: number): Promise<number | null> {
  const probeUrl = new URL(url);
  probeUrl.searchParams.set('id', id);
  try {
    const response = await fetch(probeUrl, { signal: AbortSignal.timeout(timeoutMs) });
    const text = (await response.text()).trim();
    const value = /^\d+$/.test(text) ? Number(text) : Number((JSON.parse(text) as { count?: unknown }).count);
    return Number.isInteger(value) ? value : null;
  } catch {
    return null;
  }
}
