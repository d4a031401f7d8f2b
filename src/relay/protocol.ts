import { createHash } from 'node:crypto';

/**
 * The relay's wire protocol: JSON text frames over one WebSocket per listener.
 *   relay → listener: ready, request, replaced
 *   listener → relay: response
 * Bodies travel base64-encoded, byte for byte. Heartbeats are WebSocket pings, both ways.
 */
export type RelayFrame =
  | { type: 'ready'; channel: string; publicUrl: string }
  | { type: 'request'; id: number; method: string; path: string; headers: Record<string, string | string[]>; body: string }
  | { type: 'response'; id: number; status: number; headers: Record<string, string | string[]>; body: string }
  | { type: 'replaced'; message: string };

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

function isHeaders(value: unknown): value is Record<string, string | string[]> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  return Object.values(value).every((v) => typeof v === 'string' || (Array.isArray(v) && v.every((x) => typeof x === 'string')));
}

/** Parses a request frame from the relay; null for anything malformed (the listener then ignores it). */
export function parseRequestFrame(frame: Record<string, unknown>): Extract<RelayFrame, { type: 'request' }> | null {
  if (frame.type !== 'request' || !Number.isInteger(frame.id) || typeof frame.method !== 'string' || !/^[A-Z]{1,16}$/.test(frame.method)) return null;
  if (typeof frame.path !== 'string' || !frame.path.startsWith('/') || typeof frame.body !== 'string' || !isHeaders(frame.headers)) return null;
  return frame as Extract<RelayFrame, { type: 'request' }>;
}

/** Parses a response frame from a listener; null for anything malformed (the sender is then dropped). */
export function parseResponseFrame(text: string): Extract<RelayFrame, { type: 'response' }> | null {
  let frame: unknown;
  try {
    frame = JSON.parse(text);
  } catch {
    return null;
  }
  const f = frame as Record<string, unknown>;
  if (f?.type !== 'response' || !Number.isInteger(f.id) || !Number.isInteger(f.status)) return null;
  if ((f.status as number) < 100 || (f.status as number) > 599 || typeof f.body !== 'string' || !isHeaders(f.headers)) return null;
  return frame as Extract<RelayFrame, { type: 'response' }>;
}

/** Parses `5mb`, `512kb`, `1048576` into bytes. */
export function parseSize(value: string): number {
  const match = /^(\d+(?:\.\d+)?)\s*(b|kb|mb|gb)?$/i.exec(value.trim());
  if (!match) throw new TypeError(`size ${JSON.stringify(value)} is not a number of bytes or a size like 512kb or 5mb.`);
  const unit = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 }[(match[2] ?? 'b').toLowerCase() as 'b'];
  return Math.floor(Number(match[1]) * unit);
}
