import { createHmac, timingSafeEqual } from 'node:crypto';
import { LIMITS } from './limits.js';

/** The contract's suggested replay window, in seconds (Signature, step 3). */
export const DEFAULT_TOLERANCE_SECONDS = LIMITS.replayWindowSeconds;

export type SignatureFailureReason =
  'missing_header' | 'malformed_header' | 'timestamp_outside_tolerance' | 'signature_mismatch';

export type VerifyResult =
  | { ok: true; timestamp: number }
  | {
      ok: false;
      reason: SignatureFailureReason;
      /** Unix seconds from the header's `t`, when the header had a numeric one. */
      timestamp?: number;
      /** What a person can do about it. */
      hint: string;
    };

export interface SignOptions {
  /** The raw body, exactly as it is sent. Never re-serialized. */
  payload: string | Buffer;
  /** The endpoint's whole secret, prefix included (`whsec_…`). */
  secret: string;
  /** Unix seconds to sign with. @default the current time */
  timestamp?: number;
}

export interface VerifyOptions {
  /** The `X-Service-Signature` header value, as received. */
  header: string | string[] | undefined | null;
  /** The raw request body: bytes as received, never parsed and re-serialized. */
  payload: string | Buffer;
  secret: string;
  /** Maximum |now − t| in seconds, now at the clock's full precision (not rounded); 0 turns the time check off. @default 300 */
  tolerance?: number;
  /** Clock in milliseconds since the epoch, like `Date.now`. @default Date.now */
  now?: () => number;
}

const HINTS: Record<SignatureFailureReason, string> = {
  missing_header:
    'The request has no X-Service-Signature header: it was not sent by the service, or a proxy stripped it.',
  malformed_header:
    'X-Service-Signature must look like "t=<unix seconds>,v1=<hex digest>"; this one lacks t or v1, or t is not a number.',
  timestamp_outside_tolerance:
    "The signature timestamp is too old for this machine's clock: an old delivery being replayed, or a clock that is off (check NTP).",
  signature_mismatch:
    "Either the secret is not this endpoint's secret, or the body changed after signing (for example JSON parsed and re-serialized by a framework). Verify against the raw body bytes with the secret from the create response.",
};

/** A timestamp in the future is no replay: a clock is off. */
const aheadHint = (seconds: number) =>
  `The signature timestamp is ${Math.round(seconds)} s ahead of this machine's clock: the sender's clock or this one is off (check NTP on both).`;

const WHITESPACE_HINT =
  'The secret contains whitespace (a copy-paste artefact?). Secrets never do: remove it and verify again.';

function toBuffer(payload: string | Buffer): Buffer {
  return typeof payload === 'string' ? Buffer.from(payload, 'utf8') : payload;
}

function computeDigest(timestamp: string | number, payload: string | Buffer, secret: string): string {
  return createHmac('sha256', secret).update(`${timestamp}.`).update(toBuffer(payload)).digest('hex');
}

/**
 * Signs a raw payload the way the service does: `t=<unix>,v1=<hex HMAC-SHA256 of "<t>.<body>">`,
 * keyed with the whole secret string.
 */
export function signPayload({ payload, secret, timestamp }: SignOptions): string {
  const t = timestamp ?? Math.floor(Date.now() / 1000);
  return `t=${t},v1=${computeDigest(t, payload, secret)}`;
}

interface ParsedHeader {
  t?: string;
  v1: string[];
}

/** Contract, Signature step 1: split on commas, then each segment on the first `=`, trimming whitespace. */
function parseSignatureHeader(header: string): ParsedHeader {
  const parsed: ParsedHeader = { v1: [] };
  for (const segment of header.split(',')) {
    const eq = segment.indexOf('=');
    if (eq === -1) continue;
    const key = segment.slice(0, eq).trim();
    const value = segment.slice(eq + 1).trim();
    if (key === 't') parsed.t = value;
    // Several v1 values are accepted (any match passes), as secret rotation needs.
    else if (key === 'v1' && value !== '') parsed.v1.push(value);
  }
  return parsed;
}

function constantTimeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  if (left.length !== right.length) return false;
  return timingSafeEqual(left, right);
}

function failure(reason: SignatureFailureReason, timestamp?: number, hint: string = HINTS[reason]): VerifyResult {
  return timestamp === undefined ? { ok: false, reason, hint } : { ok: false, reason, timestamp, hint };
}

/**
 * Verifies an `X-Service-Signature` header against the raw body, following the contract's receiver
 * steps exactly. Never throws on bad input: every failure is a result with a `reason` and a `hint`.
 */
export function verifySignature({
  header,
  payload,
  secret,
  tolerance = DEFAULT_TOLERANCE_SECONDS,
  now = Date.now,
}: VerifyOptions): VerifyResult {
  const value = Array.isArray(header) ? header.join(',') : header;
  if (value === undefined || value === null || value.trim() === '') return failure('missing_header');

  const { t, v1 } = parseSignatureHeader(value);
  if (t === undefined || v1.length === 0 || !/^\d+$/.test(t)) return failure('malformed_header');
  const timestamp = Number(t);

  // One rule, the README's receivers' too: the age at the clock's full precision, never rounded, so that
  // listen and the app agree at the boundary (300.6 s old is outside a 300 s window for both).
  const age = now() / 1000 - timestamp;
  if (tolerance > 0 && Math.abs(age) > tolerance) {
    return failure('timestamp_outside_tolerance', timestamp, age < 0 ? aheadHint(-age) : undefined);
  }

  const expected = computeDigest(t, payload, secret);
  if (v1.some((candidate) => constantTimeEqual(candidate, expected))) return { ok: true, timestamp };

  const hint = /\s/.test(secret) ? `${WHITESPACE_HINT} ${HINTS.signature_mismatch}` : HINTS.signature_mismatch;
  return failure('signature_mismatch', timestamp, hint);
}

/** `whsec_…abcd`: enough to tell secrets apart, never enough to use one. */
export function maskSecret(secret: string | null | undefined): string {
  if (!secret) return '(none)';
  const prefix = secret.startsWith('whsec_') ? 'whsec_' : '';
  return `${prefix}…${secret.slice(-4)}`;
}

/**
 * `headers` with `X-Service-Signature` made anew over `payload` with `secret`, at `now` (ms since the epoch): the
 * one way clockhook signs what it sends (the sandbox's deliveries, replays, scenarios, the testing library's
 * sends), so every sender signs alike. `timestamp`, in seconds, wins over `now` (a test's chosen moment).
 */
export function resign<H extends Record<string, string | string[]>>(
  headers: H,
  payload: string | Buffer,
  { secret, now = Date.now(), timestamp }: { secret: string; now?: number; timestamp?: number },
): H & { 'x-service-signature': string } {
  const t = timestamp ?? Math.floor(now / 1000);
  return Object.assign({}, headers, { 'x-service-signature': signPayload({ payload, secret, timestamp: t }) });
}
