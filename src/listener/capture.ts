import type { IncomingMessage } from 'node:http';
import { checkEnvelope } from '../contract/index.js';
import { copyHeaders } from '../http/index.js';
import { type Capture, type CaptureSignature, encodeBody, newCaptureId } from '../store/index.js';
import type { Decided } from '../story/index.js';
import type { FilterFacts } from './filters.js';

/** A request's body as the listener read it (see readBody): its bytes, cut at the body limit. */
export interface Body {
  bytes: Buffer;
  size: number;
  truncated: boolean;
}

/** `text`: the body decoded as UTF-8 (invalid bytes replaced). */
function parseEnvelope(
  text: string,
): Pick<Capture, 'envelope' | 'contractProblems'> & { data?: unknown; json?: unknown } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { envelope: null, contractProblems: [{ field: '(body)', message: 'the body is not JSON' }] };
  }
  const contractProblems = checkEnvelope(json);
  const value = (typeof json === 'object' && json !== null ? json : {}) as Record<string, unknown>;
  const string = (field: unknown) => (typeof field === 'string' ? field : null);
  const created = Number.isFinite(value.created) ? (value.created as number) : null;
  const envelope =
    typeof value.id === 'string'
      ? { id: value.id, type: string(value.type), api_version: string(value.api_version), created }
      : null;
  return { envelope, contractProblems, json, ...('data' in value ? { data: value.data } : {}) };
}

/** Why the listener answers a capture itself instead of forwarding it; null when it forwards. */
function rejectionOf(body: Body, signature: CaptureSignature, checked: boolean): Capture['rejected'] {
  if (body.truncated) return { statusCode: 413, code: 'payload_too_large' };
  // A public tunnel must not be an open door to localhost.
  if (!checked || (signature.status !== 'invalid' && signature.status !== 'missing')) return null;
  return { statusCode: 400, code: signature.status === 'missing' ? 'signature_missing' : 'signature_invalid' };
}

export interface CaptureContext {
  signature: CaptureSignature;
  /** The capture a replay repeats; undefined for a delivery. */
  replayOf: string | undefined;
  /** Whether a replay's body was changed from the one it replays (an edited replay). */
  edited?: boolean;
  /** What a capture arriving now is for its event (see StoryBook.decide). */
  decide: (capture: Pick<Capture, 'source' | 'receivedAt' | 'envelope'>, edited: boolean) => Decided;
  /** Whether an invalid or missing signature stops the forward (not with --skip-verify, nor for a replay). */
  refuseUnsigned: boolean;
  /** Whether there is an app to forward to. */
  forwarding: boolean;
  /** How a delivery's data differs from the earlier deliveries of its type (see ShapeBook). */
  drift?: (type: string, data: unknown, captureId: string) => string[];
  /** With routes by event type: the route a type goes by (null: none); undefined without them. */
  routeFor?: (type: string | null) => string | null | undefined;
  /** With `--filter`: the rule a delivery of `type` does not match (it is then not forwarded), or null. */
  filter?: (facts: FilterFacts, type: string | null) => string | null;
  now: number;
}

/** Step "capture": the capture of a request read whole, as it is stored before anything is sent on. */
export function captureOf(req: IncomingMessage, body: Body, context: CaptureContext): Capture {
  const { signature, replayOf } = context;
  const stored = encodeBody(body.bytes);
  // A UTF-8 body is decoded once, for the capture and for the envelope check.
  const parsed = parseEnvelope(stored.bodyEncoding === 'utf8' ? stored.body : body.bytes.toString('utf8'));
  const isDelivery = replayOf === undefined;
  const receivedAt = new Date(context.now).toISOString();
  const source = isDelivery ? 'delivery' : 'replay';
  // Decided once, as it arrives, and stored: what the terminal, the page and the captures commands say of it.
  const { kind, retry, repeatOf, duplicateOf } = context.decide(
    { source, receivedAt, envelope: parsed.envelope },
    context.edited ?? false,
  );
  const rejected = rejectionOf(body, signature, isDelivery && context.refuseUnsigned);
  const route = context.routeFor?.(parsed.envelope?.type ?? null);
  // A delivery a filter takes out is captured and answered 200, never forwarded (a replay goes as asked).
  const filtered =
    isDelivery && !rejected && context.filter
      ? context.filter(
          { json: parsed.json ?? null, headers: req.headers, url: req.url ?? '/' },
          parsed.envelope?.type ?? null,
        )
      : null;
  // A delivery no route takes is answered 200 by clockhook, as in capture-only mode.
  const forwarding = context.forwarding && route !== null && filtered === null;
  const id = newCaptureId(context.now);
  const { data, json: _json, ...envelope } = parsed;
  // Only what the service signed teaches the shapes: a forged or unsigned request is someone else's.
  const signed = signature.status === 'valid' || signature.status === 'unchecked';
  const type = envelope.envelope?.type;
  const drift = isDelivery && signed && type && 'data' in parsed ? (context.drift?.(type, data, id) ?? []) : [];
  return {
    id,
    receivedAt,
    source,
    ...(isDelivery ? {} : { replayOf }),
    method: req.method ?? 'GET',
    path: req.url ?? '/',
    headers: copyHeaders(req),
    ...stored,
    bodySize: body.size,
    ...(body.truncated ? { bodyTruncated: true } : {}),
    signature,
    ...envelope,
    ...(drift.length > 0 ? { drift } : {}),
    kind,
    ...(retry === undefined ? {} : { retry }),
    ...(repeatOf === undefined ? {} : { repeatOf }),
    duplicateOf: duplicateOf ?? null,
    rejected,
    ...(route !== undefined ? { route } : {}),
    ...(filtered === null ? {} : { filtered }),
    ...(rejected === null && !forwarding ? { forward: null } : {}),
  };
}

/** What the sender is told when the listener refused to forward a capture. */
export function rejectionMessage(capture: Capture, maxBodyBytes: number): string {
  if (capture.rejected?.code === 'injected_fail')
    return `Injected fault (listen --faults): answered ${capture.rejected.statusCode} without forwarding, so that the service retries.`;
  if (capture.bodyTruncated) {
    return `The body is ${capture.bodySize} bytes; clockhook accepts at most ${maxBodyBytes}. The first ${maxBodyBytes} bytes are captured.`;
  }
  const { status, reason, hint } = capture.signature;
  const why = `Signature ${status}${reason ? ` (${reason})` : ''}: not forwarded.`;
  return `${why} ${hint ?? ''} Use --skip-verify to forward anyway.`.trim();
}
