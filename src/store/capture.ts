import { isUtf8 } from 'node:buffer';
import type { ContractProblem } from '../contract/index.js';
import { formatMiB } from '../size.js';

export type SignatureStatus = 'valid' | 'invalid' | 'missing' | 'unchecked';

export interface CaptureSignature {
  status: SignatureStatus;
  /** Why it is invalid or missing: a reason of `verifySignature`. */
  reason?: string;
  /** What to do about it. */
  hint?: string;
  /** `t` of the header, Unix seconds. */
  timestamp?: number;
  /** Seconds between `t` and the arrival; negative when `t` is in the future. */
  ageSeconds?: number;
}

/**
 * What a capture was for its event: its first delivery; a retry (the service delivering again while the app
 * had taken no earlier delivery or replay of it); a duplicate (delivered again after the app had taken it
 * with a 2xx); a replay, or an edited replay (sent again from clockhook, with its body changed).
 */
export type DeliveryKind = 'first' | 'retry' | 'duplicate' | 'replay' | 'edited-replay';

export interface CaptureForward {
  /** The URL the request went to. */
  target: string;
  /** The app's status, or the listener's own 502/504 when the app did not answer. */
  statusCode: number | null;
  headers: Record<string, string | string[]>;
  /** The first 16 KiB of the app's answer (FORWARD_BODY_LIMIT), ending on a whole character. */
  body: string;
  bodyEncoding: 'utf8' | 'base64';
  /** Bytes of the whole answer; absent when none was read, and in captures stored before it was kept. */
  bodySize?: number;
  /** Set when `body` holds only the answer's first bytes. */
  bodyTruncated?: boolean;
  durationMs: number;
  error?: string;
  /** The app's answer was cut short (its connection closed mid-answer): the sender's connection was closed too. */
  cut?: boolean;
  /** How long the delivery was held for an app that was not answering (`--wait-for-app`), when it was. */
  waitedMs?: number;
}

/** A span's place: what a capture keeps of its delivery's trace, and what a replay's span links to. */
export interface TraceRef {
  traceId: string;
  spanId: string;
}

/** One request that reached the listener (or a replay of one), as stored. */
export interface Capture {
  id: string;
  receivedAt: string;
  source: 'delivery' | 'replay';
  replayOf?: string;
  method: string;
  /** Path and query as received. */
  path: string;
  /** Lower-case names. */
  headers: Record<string, string | string[]>;
  body: string;
  bodyEncoding: 'utf8' | 'base64';
  /** Bytes of the body as received (the stored body is cut at the body limit). */
  bodySize: number;
  bodyTruncated?: boolean;
  /**
   * Set when the body is longer than INLINE_BODY_CHARS: its raw bytes are kept in this file (a path
   * relative to the store's folder) and `body` holds only its first INLINE_BODY_CHARS characters.
   */
  bodyFile?: string;
  signature: CaptureSignature;
  /**
   * The envelope's fields, when the body is a JSON object with a string `id`; a field that is missing or of
   * the wrong type is null (stores written by earlier builds hold '' for a missing type and null for
   * `created`, which JSON made of NaN).
   */
  envelope: { id: string; type: string | null; api_version: string | null; created: number | null } | null;
  contractProblems: ContractProblem[];
  /**
   * What this capture was for its event when it arrived, as src/story/ decides it: absent in stores written
   * before it was kept (the story is then worked out from the captures held).
   */
  kind?: DeliveryKind;
  /** For a retry: which one (1 for the first). */
  retry?: number;
  /** The event's oldest capture held when this one arrived; null for a first delivery or a capture with no event id. */
  repeatOf?: string | null;
  /**
   * For a duplicate only: the capture the app had taken (2xx) before this one came, so it must not act on
   * this one. Stores written before `kind` was kept hold here any earlier delivery of the event id.
   */
  duplicateOf: string | null;
  /** Set when the listener answered itself instead of forwarding. */
  rejected: { statusCode: number; code: string } | null;
  /**
   * How its data differed from the earlier deliveries of its type when it came (`data.note: new field`,
   * `data.hours: string, was number`): the drift listen says once and the page marks.
   */
  drift?: string[];
  /** Faults injected on purpose (`listen --faults`): "delay 120 ms", "fail 503", "duplicate", … */
  injected?: string[];
  /** With tracing on (`listen --otlp`): the trace and server span of its delivery. */
  trace?: TraceRef;
  /** null in capture-only mode; absent until the forward result arrives. */
  forward?: CaptureForward | null;
  /** Kept by "Clear" in the inspector. */
  pinned?: boolean;
  /** With routes by event type (`--forward-to TYPES=TARGET`): the route that took it; null when none did. */
  route?: string | null;
  /** The `--filter` rule it did not match: answered 200 by clockhook, not forwarded (`forward` null). */
  filtered?: string;
}

/**
 * Stores bytes as text when they are valid UTF-8, else as base64, so nothing is lost. Not
 * TextDecoder: it drops a leading byte order mark, and the bytes would no longer match their signature.
 */
export function encodeBody(bytes: Buffer): { body: string; bodyEncoding: 'utf8' | 'base64' } {
  return isUtf8(bytes)
    ? { body: bytes.toString('utf8'), bodyEncoding: 'utf8' }
    : { body: bytes.toString('base64'), bodyEncoding: 'base64' };
}

/**
 * The first bytes of a longer body, stored like `encodeBody`. Text cut in the middle of a character
 * would no longer be UTF-8 and come out as base64, so the cut moves back to the last whole character.
 */
export function encodeBodyHead(head: Buffer): { body: string; bodyEncoding: 'utf8' | 'base64' } {
  const start = lastCharacterStart(head);
  const whole = start >= 0 && start + utf8Length(head[start]!) > head.length ? head.subarray(0, start) : head;
  return isUtf8(whole) ? { body: whole.toString('utf8'), bodyEncoding: 'utf8' } : encodeBody(head);
}

/** Where the last character of UTF-8 text begins (its last byte that is not a continuation byte). */
function lastCharacterStart(bytes: Buffer): number {
  for (let i = bytes.length - 1; i >= Math.max(0, bytes.length - 4); i--) if ((bytes[i]! & 0xc0) !== 0x80) return i;
  return -1;
}

/** Bytes of a UTF-8 character, from its first byte. */
function utf8Length(lead: number): number {
  return lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
}

/**
 * Longer bodies are kept in a file of their own, out of memory, the journal, the snapshot and the
 * inspector's messages: 1,000 captures of 5 MiB each would otherwise be 5 GB in memory, and a
 * snapshot or a page's snapshot message longer than V8's largest string (512 MiB) cannot be made.
 */
export const INLINE_BODY_CHARS = 16 * 1024;

/**
 * The first INLINE_BODY_CHARS characters of a stored body, never ending in half a UTF-16 pair, as a
 * string of its own: a slice would be a view that keeps the whole body in memory (V8's sliced strings).
 */
export function bodyPreview(body: string): string {
  const last = body.charCodeAt(INLINE_BODY_CHARS - 1);
  const cut = body.slice(0, last >= 0xd800 && last <= 0xdbff ? INLINE_BODY_CHARS - 1 : INLINE_BODY_CHARS);
  // A round trip through bytes copies it; a stored body is base64 or decoded UTF-8, so nothing changes.
  return Buffer.from(cut, 'utf8').toString('utf8');
}

/** The body's bytes, for a capture whose whole body is in memory (no `bodyFile`). */
export function decodeBody(capture: Pick<Capture, 'body' | 'bodyEncoding'>): Buffer {
  return Buffer.from(capture.body, capture.bodyEncoding === 'base64' ? 'base64' : 'utf8');
}

let lastMs = 0;
let sequence = 0;
/** Time-ordered, unique ids: `cap_<ms base36><sequence><random>`; sorting ids sorts by arrival. */
export function newCaptureId(now = Date.now()): string {
  sequence = now === lastMs ? sequence + 1 : 0;
  lastMs = now;
  const random = Math.floor(Math.random() * 36 ** 4)
    .toString(36)
    .padStart(4, '0');
  return `cap_${now.toString(36).padStart(9, '0')}${sequence.toString(36).padStart(3, '0')}${random}`;
}

/**
 * Why a capture cannot be sent again as it came (null when it can): its body was over what listen keeps, and only
 * its first part was captured. An edited body may still go.
 */
export function cutBodyWords(capture: Capture): string | null {
  if (!capture.bodyTruncated) return null;
  return `${capture.id} came with a body of ${formatMiB(capture.bodySize)}, over what listen keeps in one delivery, and only its first part was captured: it cannot be sent again as it came`;
}
