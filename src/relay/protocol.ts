import { createHash } from 'node:crypto';
import type WebSocket from 'ws';

/**
 * The relay's wire protocol, over one WebSocket per listener.
 *   relay → listener: ready, request, replaced, refused
 *   listener → relay: response
 * ready and replaced are JSON text messages. A request or a response is a binary message: a 4-byte
 * big-endian length, the frame without its body as JSON, then the body's bytes as they are (version 1's
 * JSON text with the body in base64 cost the relay several times a body's size in memory). A listener says it reads version 2 with the handshake header
 * `x-clockhook-relay-protocol: 2`; the relay sends version-1 requests to one that does not, and a
 * listener answers in the form it was asked in, so either side can be upgraded first.
 * Heartbeats are WebSocket pings, both ways.
 */
export const PROTOCOL_HEADER = 'x-clockhook-relay-protocol';
export const PROTOCOL_VERSION = '2';

type HeaderMap = Record<string, string | string[]>;

export interface RequestFrame {
  type: 'request';
  id: number;
  method: string;
  path: string;
  headers: HeaderMap;
  body: Buffer;
}

export interface ResponseFrame {
  type: 'response';
  id: number;
  status: number;
  headers: HeaderMap;
  body: Buffer;
}

export type ControlFrame =
  | { type: 'ready'; channel: string; publicUrl: string }
  | { type: 'replaced'; message: string }
  /** The listener's access key was revoked: it must stop (close code 4003). */
  | { type: 'refused'; message: string };

/** At least 128 random bits, url-safe. */
export const TOKEN_PATTERN = /^[A-Za-z0-9_-]{22,128}$/;
export const CHANNEL_PATTERN = /^[A-Za-z0-9_-]{32}$/;

/**
 * The channel id is a hash of the token: the relay recognizes a channel's owner with no state of
 * its own (even after it restarts), and the id in the public URL reveals nothing of the token.
 */
export function channelFor(token: string): string {
  return createHash('sha256').update(token).digest('base64url').slice(0, 32);
}

export const CONNECT_PATH = '/connect';

/** Header in which listen presents its access key in the WebSocket handshake (never in a URL). */
export const KEY_HEADER = 'x-clockhook-relay-key';

function isHeaders(value: unknown): value is HeaderMap {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  return Object.values(value).every(
    (v) => typeof v === 'string' || (Array.isArray(v) && v.every((x) => typeof x === 'string')),
  );
}

type Unsent<T extends RequestFrame | ResponseFrame> = Omit<T, 'body'> & { body: Buffer | Buffer[] };

/**
 * Fields and a body as one binary message: a 4-byte big-endian length, the fields as JSON, then the body's
 * bytes. The body may be the chunks it arrived in: they are copied into the message, never joined first.
 * Used on the WebSocket (version 2) and between relay instances over Redis.
 */
export function packBinary(fields: object, body: Buffer | Buffer[]): Buffer {
  const chunks = Array.isArray(body) ? body : [body];
  const json = Buffer.from(JSON.stringify(fields));
  const message = Buffer.allocUnsafe(chunks.reduce((length, chunk) => length + chunk.length, 4 + json.length));
  message.writeUInt32BE(json.length, 0);
  let offset = 4 + json.copy(message, 4);
  for (const chunk of chunks) offset += chunk.copy(message, offset);
  return message;
}

/** The fields and body of a `packBinary` message; null when it is not one. */
export function unpackBinary(bytes: Buffer): { fields: Record<string, unknown>; body: Buffer } | null {
  try {
    const length = bytes.readUInt32BE(0);
    if (4 + length > bytes.length) return null;
    const fields: unknown = JSON.parse(bytes.toString('utf8', 4, 4 + length));
    if (typeof fields !== 'object' || fields === null || Array.isArray(fields)) return null;
    return { fields: fields as Record<string, unknown>, body: bytes.subarray(4 + length) };
  } catch {
    return null;
  }
}

/** A request or response as a binary (version 2) message, or as a version-1 text message. */
export function encodeFrame(frame: Unsent<RequestFrame> | Unsent<ResponseFrame>, binary: boolean): Buffer | string {
  const { body, ...fields } = frame;
  if (binary) return packBinary(fields, body);
  const bytes = Array.isArray(body) ? Buffer.concat(body) : body;
  return JSON.stringify(Object.assign(fields, { body: bytes.toString('base64') }));
}

/**
 * A message's fields, with a request's or response's body as bytes (from a binary message, or from
 * base64 in a version-1 text one); null when it is not a JSON object or its length is wrong.
 */
export function decodeFrame(data: WebSocket.RawData, isBinary: boolean): Record<string, unknown> | null {
  const bytes = Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
  if (isBinary) {
    const unpacked = unpackBinary(bytes);
    return unpacked && Object.assign(unpacked.fields, { body: unpacked.body });
  }
  let fields: unknown;
  try {
    fields = JSON.parse(bytes.toString('utf8'));
  } catch {
    return null;
  }
  if (typeof fields !== 'object' || fields === null || Array.isArray(fields)) return null;
  const text = (fields as { body?: unknown }).body;
  return typeof text === 'string'
    ? Object.assign(fields, { body: Buffer.from(text, 'base64') })
    : (fields as Record<string, unknown>);
}

/** A request frame from the relay; null for anything malformed (the listener then ignores it). */
export function parseRequestFrame(frame: Record<string, unknown>): RequestFrame | null {
  if (
    frame.type !== 'request' ||
    !Number.isInteger(frame.id) ||
    typeof frame.method !== 'string' ||
    !/^[A-Z]{1,16}$/.test(frame.method)
  )
    return null;
  if (
    typeof frame.path !== 'string' ||
    !frame.path.startsWith('/') ||
    !Buffer.isBuffer(frame.body) ||
    !isHeaders(frame.headers)
  )
    return null;
  return frame as unknown as RequestFrame;
}

/** A response frame from a listener; null for anything malformed (the listener is then dropped). */
export function parseResponseFrame(frame: Record<string, unknown> | null): ResponseFrame | null {
  if (frame?.type !== 'response' || !Number.isInteger(frame.id) || !Number.isInteger(frame.status)) return null;
  if (
    (frame.status as number) < 100 ||
    (frame.status as number) > 599 ||
    !Buffer.isBuffer(frame.body) ||
    !isHeaders(frame.headers)
  )
    return null;
  return frame as unknown as ResponseFrame;
}
