// A stored capture (Capture, capture.ts) as a JSON Schema, written once: the MCP tools derive their output schemas
// from it, so a strict client that checks a result against them accepts every capture listen makes (a drifted
// one too). The type and this schema are held to each other field by field at compile time (the check at the end).
import type { Capture, CaptureForward, CaptureSignature } from './capture.js';

const HEADERS = {
  type: 'object',
  propertyNames: { type: 'string' },
  additionalProperties: { anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }] },
  description: 'header names in lower case, as received',
} as const;

const BODY_ENCODING = {
  type: 'string',
  enum: ['utf8', 'base64'],
  description: 'utf8 when the bytes are valid UTF-8 text, else base64 of the bytes',
} as const;

const KIND = { type: 'string', enum: ['first', 'retry', 'duplicate', 'replay', 'edited-replay'] } as const;

const SIGNATURE_PROPERTIES = {
  status: { type: 'string', enum: ['valid', 'invalid', 'missing', 'unchecked'] },
  reason: { type: 'string', description: 'why it is invalid or missing' },
  hint: { type: 'string', description: 'what to do about it' },
  timestamp: { type: 'number', description: 't of the X-Service-Signature header, Unix seconds' },
  ageSeconds: { type: 'number', description: 'seconds between t and the arrival' },
} as const;

const FORWARD_PROPERTIES = {
  target: { type: 'string', description: 'the URL it was forwarded to' },
  statusCode: { type: ['number', 'null'], description: "the app's status; null when it did not answer" },
  headers: HEADERS,
  body: { type: 'string', description: "the app's answer (its first 16 KiB at most)" },
  bodyEncoding: BODY_ENCODING,
  bodySize: { type: 'number', description: "bytes of the app's whole answer" },
  bodyTruncated: { type: 'boolean', description: "the answer's body holds only its first bytes" },
  durationMs: { type: 'number', description: 'how long the app took (the wait for it included)' },
  error: { type: 'string', description: 'why the app did not answer, or how its answer was cut' },
  cut: { type: 'boolean', description: "the app's answer was cut short: the sender saw an error" },
  waitedMs: { type: 'number', description: 'how long it was held for an app that was not answering' },
} as const;

const nullable = <T extends object>(schema: T) => ({ anyOf: [schema, { type: 'null' }] }) as const;

/** The properties of a stored capture's JSON Schema, by field of Capture. */
export const CAPTURE_PROPERTIES = {
  id: { type: 'string', description: 'cap_…' },
  receivedAt: { type: 'string', description: 'ISO time' },
  source: { type: 'string', enum: ['delivery', 'replay'] },
  replayOf: { type: 'string', description: 'for a replay: the capture it sent again' },
  method: { type: 'string' },
  path: { type: 'string', description: 'path and query as received' },
  headers: HEADERS,
  body: { type: 'string' },
  bodyEncoding: BODY_ENCODING,
  bodySize: { type: 'number', description: 'bytes of the whole body' },
  bodyTruncated: { type: 'boolean', description: "the listener kept only the body's first bytes (over its limit)" },
  bodyFile: { type: 'string', description: 'the file its raw bytes are kept in, relative to the store' },
  signature: {
    type: 'object',
    description: 'the X-Service-Signature verdict',
    properties: SIGNATURE_PROPERTIES,
    required: ['status'],
    additionalProperties: false,
  },
  envelope: nullable({
    type: 'object',
    description: "the envelope's fields; null when the body is not an event envelope",
    properties: {
      id: { type: 'string' },
      type: { type: ['string', 'null'] },
      api_version: { type: ['string', 'null'] },
      created: { type: ['number', 'null'] },
    },
    required: ['id', 'type', 'api_version', 'created'],
    additionalProperties: false,
  }),
  contractProblems: {
    type: 'array',
    description: 'where the envelope breaks the contract',
    items: {
      type: 'object',
      properties: { field: { type: 'string' }, message: { type: 'string' } },
      required: ['field', 'message'],
      additionalProperties: false,
    },
  },
  kind: KIND,
  retry: { type: 'number' },
  repeatOf: { type: ['string', 'null'], description: "the event's oldest capture held when this one came" },
  duplicateOf: { type: ['string', 'null'], description: 'for a duplicate: the capture the app had taken' },
  rejected: nullable({
    type: 'object',
    description: 'set when clockhook answered itself instead of forwarding',
    properties: { statusCode: { type: 'number' }, code: { type: 'string' } },
    required: ['statusCode', 'code'],
    additionalProperties: false,
  }),
  drift: {
    type: 'array',
    items: { type: 'string' },
    description: 'how its data differed from the earlier deliveries of its type when it came',
  },
  injected: { type: 'array', items: { type: 'string' }, description: 'faults injected on purpose (listen --faults)' },
  trace: {
    type: 'object',
    properties: { traceId: { type: 'string' }, spanId: { type: 'string' } },
    required: ['traceId', 'spanId'],
    additionalProperties: false,
  },
  forward: nullable({
    type: 'object',
    description: "where it was forwarded and the app's answer; null in capture-only mode; absent while pending",
    properties: FORWARD_PROPERTIES,
    required: ['target', 'statusCode', 'headers', 'body', 'bodyEncoding', 'durationMs'],
    additionalProperties: false,
  }),
  pinned: { type: 'boolean' },
  route: { type: ['string', 'null'], description: 'the route that took it (--forward-to TYPES=TARGET)' },
  filtered: { type: 'string', description: 'the --filter rule it did not match: answered 200, not forwarded' },
} as const;

/** The fields every stored capture has. */
export const CAPTURE_REQUIRED = [
  'id',
  'receivedAt',
  'source',
  'method',
  'path',
  'headers',
  'body',
  'bodyEncoding',
  'bodySize',
  'signature',
  'envelope',
  'contractProblems',
  'duplicateOf',
  'rejected',
] as const satisfies readonly (keyof Capture)[];

// The schema and the type name the same fields: a field in one and not the other fails typecheck here.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const _sameFields: [
  Same<keyof typeof CAPTURE_PROPERTIES, keyof Capture>,
  Same<keyof typeof FORWARD_PROPERTIES, keyof CaptureForward>,
  Same<keyof typeof SIGNATURE_PROPERTIES, keyof CaptureSignature>,
] = [true, true, true];
