import { createHash } from 'node:crypto';
import type WebSocket from 'ws';

/**
 * The relay's wire protocol, over one WebSocket per listener.
 *   relay → listener: ready, request, replaced
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
  { type: 'ready'; channel: string; publicUrl: string } | { type: 'replaced'; message: string };

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

function isHeaders(value: unknown): value is HeaderMap {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  return Object.values(value).every(
    (v) => typeof v === 'string' || (Array.isArray(v) && v.every((x) => typeof x === 'string')),
  );
}

type Unsent<T extends RequestFrame | ResponseFrame> = Omit<T, 'body'> & { body: Buffer | Buffer[] };

/**
 * A request or response as a binary (version 2) message, or as a version-1 text message. The body
 * may be the chunks it arrived in: they are copied into the message, never joined first.
 */
export function encodeFrame(frame: Unsent<RequestFrame> | Unsent<ResponseFrame>, binary: boolean): Buffer | string {
  const { body, ...fields } = frame;
  const chunks = Array.isArray(body) ? body : [body];
  if (!binary) return JSON.stringify({ ...fields, body: Buffer.concat(chunks).toString('base64') });
  const json = Buffer.from(JSON.stringify(fields));
  const message = Buffer.allocUnsafe(chunks.reduce((length, chunk) => length + chunk.length, 4 + json.length));
  message.writeUInt32BE(json.length, 0);
  let offset = 4 + json.copy(message, 4);
  for (const chunk of chunks) offset += chunk.copy(message, offset);
  return message;
}

/**
 * A message's fields, with a request's or response's body as bytes (from a binary message, or from
 * base64 in a version-1 text one); null when it is not a JSON object or its length is wrong.
 */
export function decodeFrame(data: WebSocket.RawData, isBinary: boolean): Record<string, unknown> | null {
  const bytes = Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
  let fields: unknown;
  let body: Buffer | undefined;
  try {
    if (isBinary) {
      const length = bytes.readUInt32BE(0);
      if (4 + length > bytes.length) return null;
      fields = JSON.parse(bytes.toString('utf8', 4, 4 + length));
      body = bytes.subarray(4 + length);
    } else {
      fields = JSON.parse(bytes.toString('utf8'));
      const text = (fields as { body?: unknown } | null)?.body;
      if (typeof text === 'string') body = Buffer.from(text, 'base64');
    }
  } catch {
    return null;
  }
  if (typeof fields !== 'object' || fields === null || Array.isArray(fields)) return null;
  return body === undefined ? (fields as Record<string, unknown>) : { ...fields, body };
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
