import { randomBytes } from 'node:crypto';
import { type Fixture, fixtureProblem, signedFixture } from '../captures/index.js';
import { type CheckReport, type CheckWords, runChecks } from '../check/index.js';
import { API_VERSION, type DeliveryEnvelope, resign, sampleData, setPath } from '../contract/index.js';
import { postBytes } from '../http/index.js';
import { OptionError } from '../errors.js';
import { isTaken } from '../contract/index.js';

/** A signed delivery: the headers the service sends with it, and its bytes. */
export interface SignedDelivery {
  headers: Record<string, string>;
  body: Buffer;
}

/**
 * Signs a body as the service does (`X-Service-Signature: t=<unix>,v1=<hex>` over `<t>.<raw body>`);
 * `timestamp` (Unix seconds) lets a test send a stale one.
 */
export function signDelivery({
  body,
  secret,
  timestamp = Math.floor(Date.now() / 1000),
}: {
  body: string | Buffer | object;
  secret: string;
  timestamp?: number;
}): SignedDelivery {
  const bytes = Buffer.isBuffer(body) ? body : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
  const type = (() => {
    try {
      return String((JSON.parse(bytes.toString('utf8')) as { type?: unknown }).type ?? '');
    } catch {
      return '';
    }
  })();
  const headers = { 'content-type': 'application/json', ...(type ? { 'x-service-event': type } : {}) };
  return { headers: resign(headers, bytes, { secret, timestamp }), body: bytes };
}

export interface SendOptions {
  secret: string;
  /** An envelope of this type with its sample data (or `data`). @default 'punch.created' */
  type?: string;
  data?: Record<string, unknown>;
  /** Changes to the data by path, as `trigger --set`: `{ 'employee.name': 'Zoë' }`. */
  set?: Record<string, unknown>;
  /** A fixture exported by `captures export --format fixture` (re-signed), instead of a sample. */
  fixture?: Fixture;
  /** A body given as it is, instead of a sample. */
  body?: string | Buffer | object;
  /** Unix seconds of the signature: a stale one to test the replay window. @default now */
  timestamp?: number;
  /** Headers added to (or replacing) the signed ones. */
  headers?: Record<string, string>;
  /** Throws, saying what the handler did, unless it answered so (each time, with `duplicate`). */
  expect?: 'accepted' | 'refused';
  /**
   * Sends it twice, as the service does when it retries a delivery the handler took: the same body and event
   * id, signed again. The second answer is `duplicate` in the result; a handler must act on it once.
   */
  duplicate?: boolean;
}

export interface SendResult {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  /** The envelope sent, when it was one. */
  envelope: DeliveryEnvelope | null;
  /** With `duplicate`: the answer to the second send. */
  duplicate?: Omit<SendResult, 'duplicate'>;
}

/** An envelope as the service sends it, with a fresh event id. */
export function envelopeOf(
  type: string,
  data?: Record<string, unknown>,
  set: Record<string, unknown> = {},
): DeliveryEnvelope {
  const changed = structuredClone(data ?? sampleData(type));
  for (const [path, value] of Object.entries(set)) setPath(changed, path, value);
  const created = Math.floor(Date.now() / 1000);
  return {
    id: `evt_${randomBytes(12).toString('hex')}`,
    object: 'event',
    type,
    api_version: API_VERSION,
    created,
    data: changed,
  };
}

/** Sends a delivery; a handler that cannot be reached is an error that says where. */
async function post(
  url: URL,
  headers: Record<string, string | string[]>,
  body: Buffer,
): Promise<Omit<SendResult, 'envelope'>> {
  try {
    // Local apps use self-signed certificates, as for listen's --forward-to. A handler gets twice the
    // contract's 30 s before the send gives up, so that a test of a slow one does not hang.
    const options = {
      maxChars: Number.POSITIVE_INFINITY,
      rejectUnauthorized: false,
      signal: AbortSignal.timeout(60_000),
    };
    const answer = await postBytes(url, headers, body, options);
    return { status: answer.status, headers: answer.headers, body: answer.body };
  } catch (error) {
    throw new Error(`sendDelivery: could not reach the handler at ${url.href}: ${(error as Error).message}`);
  }
}

/**
 * One signed POST to your handler: a sample envelope, a fixture (re-signed), or a body given. With
 * `expect`, an answer other than that is an error that says what the handler did.
 */
export async function sendDelivery(url: string, options: SendOptions): Promise<SendResult> {
  const target = new URL(url);
  let request: { headers: Record<string, string | string[]>; body: Buffer; envelope: DeliveryEnvelope | null };
  if (options.fixture) {
    const problem = fixtureProblem(options.fixture);
    if (problem) throw new OptionError(`sendDelivery: the fixture cannot be sent: ${problem}.`);
    const signed = signedFixture(options.fixture, { secret: options.secret, timestamp: options.timestamp });
    request = { headers: signed.headers, body: signed.body, envelope: null };
  } else {
    const envelope =
      options.body === undefined ? envelopeOf(options.type ?? 'punch.created', options.data, options.set) : null;
    const signed = signDelivery({
      body: options.body ?? envelope!,
      secret: options.secret,
      timestamp: options.timestamp,
    });
    request = { ...signed, envelope };
  }
  const result: SendResult = {
    ...(await post(target, { ...request.headers, ...options.headers }, request.body)),
    envelope: request.envelope,
  };
  expectAnswer(result, request.body, options.expect);
  if (!options.duplicate) return result;
  // The same bytes again, signed anew (at the same moment or a later one), as the service's retry sends them.
  const again = signDelivery({ body: request.body, secret: options.secret, timestamp: options.timestamp });
  const duplicate = {
    ...(await post(target, { ...request.headers, ...again.headers, ...options.headers }, request.body)),
    envelope: request.envelope,
  };
  expectAnswer(duplicate, request.body, options.expect, 'the duplicate of ');
  return { ...result, duplicate };
}

/** Throws, saying what the handler did, when it did not answer as `expect` says. */
function expectAnswer(
  result: Omit<SendResult, 'duplicate'>,
  body: Buffer,
  expect: SendOptions['expect'],
  which = '',
): void {
  const accepted = isTaken(result.status);
  if (expect && accepted !== (expect === 'accepted')) {
    const what = `${which}${result.envelope ? `${result.envelope.type} ${result.envelope.id}` : `a ${body.length}-byte body`}`;
    const said = result.body.slice(0, 300);
    throw new Error(
      expect === 'accepted'
        ? `the handler answered ${result.status} to a validly signed delivery of ${what}: ${said}`
        : `the handler answered ${result.status} to a delivery of ${what} that it should have refused (its signature or timestamp is not valid): ${said}`,
    );
  }
}

/** How a hint names what to change: checkReceiver's own arguments. */
const LIBRARY_WORDS: CheckWords = {
  target: (url) => `checkReceiver('${url}', …)`,
  dedupeProbe:
    'Pass dedupeProbe: <url> to checkReceiver (answering GET <url>?id=<event id> with how many times the id was processed)',
};

/** `clockhook check` as a call: the whole conformance battery against your handler. */
export function checkReceiver(
  url: string,
  options: { secret: string; events?: string[]; dedupeProbe?: string; timeoutMs?: number },
): Promise<CheckReport> {
  return runChecks({
    words: LIBRARY_WORDS,
    target: new URL(url),
    secret: options.secret,
    events: options.events,
    dedupeProbe: options.dedupeProbe ? new URL(options.dedupeProbe) : undefined,
    timeoutMs: options.timeoutMs,
  });
}
