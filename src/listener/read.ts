import type { IncomingMessage } from 'node:http';
import { type BudgetLease, readBody } from '../http/index.js';
import type { Body } from './capture.js';

/**
 * Step "read" over HTTP: the raw body, each chunk counted against the budget. Past the limit it stops
 * at once, keeping the first `limit` bytes (the answer is 413 and the connection is closed, so an
 * endless body costs nothing more); with the budget full it keeps nothing (the answer is 503).
 */
export async function readFromSocket(req: IncomingMessage, limit: number, lease: BudgetLease): Promise<Body | 'busy'> {
  const read = await readBody(req, { limit, lease, excess: 'stop' });
  if (read === 'busy') return 'busy';
  return { bytes: Buffer.concat(read.chunks), size: read.size, truncated: read.truncated };
}

/** Step "read" for a request handed over whole: cut at `limit` like one read from a socket, and counted. */
export function wholeBody(bytes: Buffer, limit: number, lease: BudgetLease): Body | 'busy' {
  const body =
    bytes.length > limit
      ? { bytes: bytes.subarray(0, limit), size: bytes.length, truncated: true }
      : { bytes, size: bytes.length, truncated: false };
  return lease.take(body.bytes.length) ? body : 'busy';
}

/** Reads a request's body under the budget: its bytes, or `busy` when the budget had no room for them. */
export type Read = (lease: BudgetLease) => Promise<Body | 'busy'>;
