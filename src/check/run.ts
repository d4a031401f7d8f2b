import { randomBytes } from 'node:crypto';
import {
  checkEnvelope,
  type DeliveryEnvelope,
  maskSecret,
  PING_EVENT_TYPE,
  sampleData,
  signPayload,
} from '../contract/index.js';
import { isSignatureRefusal, shownUrl } from '../net.js';
import { type Answer, describeAnswer, is2xx, is5xx, redirectTo, sendDelivery } from './send.js';

export type CheckStatus = 'pass' | 'fail' | 'warn';

export interface CheckResult {
  id: string;
  name: string;
  status: CheckStatus;
  /** What was sent, in words. */
  sent: string;
  /** What came back, in words. */
  got: string;
  /** How to fix it (fail and warn only). */
  hint?: string;
}

export interface CheckReport {
  target: string;
  ok: boolean;
  checks: CheckResult[];
}

export interface CheckOptions {
  target: URL;
  secret: string;
  /** Event types to send valid deliveries of. @default DEFAULT_CHECK_EVENTS */
  events?: string[];
  /** GET <url>?id=<event id> answers how many times the app processed that id. */
  dedupeProbe?: URL;
  /** Per request. @default 30000 (the contract's limit) */
  timeoutMs?: number;
  /** @default '2026-11-01' */
  apiVersion?: string;
  /** Answers slower than this are a warning. @default 10000 */
  slowMs?: number;
  /** @default Date.now */
  now?: () => number;
}

/** One type per area the contract names most: enough to show a handler that trips on a type. */
export const DEFAULT_CHECK_EVENTS = [
  'punch.created',
  'employee.updated',
  'time_card.approved',
  'pto_request.approved',
  'shift.published',
];

const SLOW_WARN_MS = 10_000;
const CONTRACT_LIMIT_MS = 30_000;

/** Thrown when nothing answers at the target: not a check result, the run cannot start. */
export class TargetUnreachableError extends Error {
  override readonly name = 'TargetUnreachableError';
}

const eventId = () => `evt_check_${randomBytes(8).toString('hex')}`;

interface Battery {
  options: CheckOptions & { apiVersion: string; timeoutMs: number; now: () => number };
  /** Sends one envelope, signed with the secret unless `header` says otherwise (null: no header). */
  deliver(env: DeliveryEnvelope, how?: { header?: string | null; body?: Buffer; timestamp?: number }): Promise<Answer>;
  record(result: CheckResult): void;
  envelope(type: string, data?: Record<string, unknown>, apiVersion?: string): DeliveryEnvelope;
  /** Every answer's duration so far, for the response-time check. */
  durations: number[];
  /** The answers to deliveries signed correctly and now, which the app should take. */
  signedAnswers: Answer[];
}

function makeBattery(options: CheckOptions, results: CheckResult[]): Battery {
  const config = {
    ...options,
    apiVersion: options.apiVersion ?? '2026-11-01',
    timeoutMs: options.timeoutMs ?? CONTRACT_LIMIT_MS,
    now: options.now ?? Date.now,
  };
  const durations: number[] = [];
  const signedAnswers: Answer[] = [];
  return {
    options: config,
    durations,
    signedAnswers,
    envelope: (type, data, apiVersion = config.apiVersion) => ({
      id: eventId(),
      object: 'event',
      type,
      api_version: apiVersion,
      created: Math.floor(config.now() / 1000),
      data: data ?? sampleData(type),
    }),
    record(result) {
      results.push(result);
    },
    async deliver(env, { header, body, timestamp } = {}) {
      // Whatever a check breaks on purpose, the envelope itself is always the contract's.
      const problems = checkEnvelope(env);
      if (problems.length > 0)
        throw new Error(`clockhook check built a non-conforming envelope: ${JSON.stringify(problems)}`);
      const raw = body ?? Buffer.from(JSON.stringify(env));
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        'user-agent': 'clockhook-check',
        'x-service-event': env.type,
      };
      const signature =
        header === undefined
          ? signPayload({
              payload: raw,
              secret: config.secret,
              timestamp: timestamp ?? Math.floor(config.now() / 1000),
            })
          : header;
      if (signature !== null) headers['x-service-signature'] = signature;
      const answer = await sendDelivery(config.target, { headers, body: raw }, config.timeoutMs);
      durations.push(answer.durationMs);
      if (header === undefined && timestamp === undefined) signedAnswers.push(answer);
      return answer;
    },
  };
}

/**
 * Pass on 2xx. A redirect fails with its own hint, whatever the check: the service follows none, so the
 * app must answer at the URL it is given (a trailing slash is the usual culprit). So does no answer at
 * all: the check's own advice (about raw bodies, say) would send the developer looking in the wrong place.
 */
function acceptance(answer: Answer, hint: string, target: URL) {
  if (is2xx(answer)) return { status: 'pass' as const };
  if (answer.kind === 'error' && answer.code === 'ECONNRESET') {
    return {
      status: 'fail' as const,
      hint: 'The app closed the connection without answering: it most likely crashed handling this delivery (see its log). Answer 2xx to every delivery whose signature verifies.',
    };
  }
  const location = redirectTo(answer);
  if (location && URL.canParse(location, target.href)) {
    const to = new URL(location, target).href;
    return {
      status: 'fail' as const,
      hint: `The app redirects to ${to}, and the service does not follow redirects: it counts every such delivery as failed. Register (and check) the URL the app answers at: --forward-to ${to}`,
    };
  }
  return { status: 'fail' as const, hint };
}

/** 1. A valid delivery of each type; the first also tells whether anything answers at all. */
async function checkValidDeliveries(b: Battery, events: string[]): Promise<void> {
  for (const [index, type] of events.entries()) {
    const env = b.envelope(type);
    const answer = await b.deliver(env);
    if (
      index === 0 &&
      answer.kind === 'error' &&
      ['ECONNREFUSED', 'ENOTFOUND', 'EHOSTUNREACH'].includes(answer.code ?? '')
    ) {
      throw new TargetUnreachableError(
        `nothing answers at ${shownUrl(b.options.target)} (${answer.error}). Start your app, or correct --forward-to.`,
      );
    }
    b.record({
      id: `valid:${type}`,
      name: `valid ${type} delivery is accepted`,
      sent: `${type} ${env.id}, correctly signed`,
      got: describeAnswer(answer),
      ...acceptance(
        answer,
        'Answer 2xx to every delivery whose signature verifies; a non-2xx makes the service retry and, after 10 failed deliveries, disable the endpoint. Unknown fields in data must not fail the handler.',
        b.options.target,
      ),
    });
  }
}

/** The raw body, not re-serialized JSON: the same envelope with whitespace, as some senders format it. */
async function checkRawBody(b: Battery, type: string): Promise<void> {
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
      b.options.target,
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
async function checkForgeries(b: Battery): Promise<void> {
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
async function checkStaleTimestamp(b: Battery): Promise<void> {
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
          hint: 'Reject signatures whose t is more than 300 s from now, so a captured delivery cannot be replayed later. The contract makes this optional, hence a warning.',
        }
      : {}),
    ...(crashed ? { hint: 'Reject it with a 4xx; do not crash.' } : {}),
  });
}

/** 6. The same event twice: accepted both times, processed once (as far as the app lets us see). */
async function checkDuplicate(b: Battery): Promise<void> {
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
      hint: 'Store or log each envelope id and skip ids already seen. Pass --dedupe-probe <url> (answering GET <url>?id=<event id> with how many times the id was processed) to have this checked.',
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
              ? 'The --dedupe-probe URL must answer a number, or JSON with a count.'
              : 'Deduplicate on the envelope id: process an id once, answer 2xx to the repeats.',
        }),
  });
}

/** 8. The contract's envelope, read per event: a newer api_version and new data fields are accepted. */
async function checkEnvelopeVersion(b: Battery): Promise<void> {
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
      b.options.target,
    ),
  });
}

/** 9. The ping diagnostic. */
async function checkPing(b: Battery): Promise<void> {
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
      b.options.target,
    ),
  });
}

/** 7. Response time, over everything sent. */
function checkResponseTime(b: Battery): void {
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
          hint: 'Answer 2xx first and do the work afterwards (a queue, a background job): the service counts an answer after 30 s as a failed attempt.',
        }),
  });
}

/** The checks that send correctly signed deliveries the app must take. */
const ACCEPTANCE_CHECKS = /^(valid:|raw-body$|duplicate$|envelope$|ping$)/;

/**
 * An app that refuses every correctly signed delivery with 400, 401 or 403 most likely verifies with
 * another secret than check signs with: the usual mistake, which would otherwise read as a list of
 * unrelated failures (raw body, api_version, ping), each with its own advice. Their hints then say the
 * one thing to fix.
 */
function diagnoseSecret(b: Battery, results: CheckResult[]): void {
  const refusals = b.signedAnswers.map((a) => (a.kind === 'answer' && isSignatureRefusal(a.status) ? a.status : null));
  if (refusals.length === 0 || refusals.includes(null)) return;
  const statuses = [...new Set(refusals)].join(', ');
  const hint = `The app refused every correctly signed delivery (${statuses}): it most likely verifies with another secret than ${maskSecret(b.options.secret)}, the one check signed with. Give check your app's secret (--secret), or give your app this one ("npx clockhook secret" prints the one clockhook listen registered in this folder).`;
  for (const result of results) {
    if (result.status === 'fail' && ACCEPTANCE_CHECKS.test(result.id)) result.hint = hint;
  }
}

/**
 * Sends a battery of signed and deliberately mis-signed deliveries to the developer's app and
 * reports, check by check, whether it honours the contract.
 */
export async function runChecks(options: CheckOptions): Promise<CheckReport> {
  const results: CheckResult[] = [];
  const battery = makeBattery(options, results);
  const events = options.events ?? DEFAULT_CHECK_EVENTS;
  await checkValidDeliveries(battery, events);
  await checkRawBody(battery, events[0] ?? 'punch.created');
  await checkForgeries(battery);
  await checkStaleTimestamp(battery);
  await checkDuplicate(battery);
  await checkEnvelopeVersion(battery);
  await checkPing(battery);
  checkResponseTime(battery);
  diagnoseSecret(battery, results);
  return { target: shownUrl(options.target), ok: results.every((r) => r.status !== 'fail'), checks: results };
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
