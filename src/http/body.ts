import type { IncomingMessage } from 'node:http';
import type { BudgetLease } from './budget.js';

/** A body read under a size limit and a byte budget (see readBody). */
export type BodyRead =
  | {
      /** The chunks kept, in order: the whole body, or its first `limit` bytes when truncated. */
      chunks: Buffer[];
      /** Its whole size, as far as known (Content-Length, when it is larger than what was read). */
      size: number;
      truncated: boolean;
    }
  /** The budget had no room for a chunk: nothing is kept. */
  | 'busy';

export interface ReadBodyOptions {
  /** The most bytes kept; the rest makes the read `truncated`. */
  limit: number;
  /** Counts each chunk against the budget of bodies held (`lease.take`). */
  lease: BudgetLease;
  /**
   * What happens to the rest of a body past the limit or the budget: `stop` pauses the request at
   * once (the caller closes the connection behind its answer), `drain` reads and drops it, so that a
   * sender that is still sending reads the answer. With `drain` a truncated body keeps nothing.
   */
  excess: 'stop' | 'drain';
}

/**
 * Reads a request's body once, as bytes, each chunk counted against the byte budget as it arrives.
 * Shared by the listener (which keeps the first `limit` bytes of an oversized body in the capture) and
 * the relay (which keeps nothing of one).
 */
export function readBody(req: IncomingMessage, { limit, lease, excess }: ReadBodyOptions): Promise<BodyRead> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let refused: 'busy' | 'truncated' | null = null;
    const declaredSize = () => {
      const declared = Number(req.headers['content-length']);
      return Number.isFinite(declared) && declared > size ? declared : size;
    };
    const settle = () =>
      resolve(
        refused === 'busy' ? 'busy' : { chunks, size: refused ? declaredSize() : size, truncated: refused !== null },
      );
    const refuse = (why: 'busy' | 'truncated') => {
      refused = why;
      if (why === 'busy' || excess === 'drain') {
        chunks.length = 0;
        lease.giveBack();
      }
      if (excess === 'stop') {
        req.off('data', onData);
        req.pause();
        settle();
      }
    };
    const onData = (chunk: Buffer) => {
      const before = size;
      size += chunk.length;
      if (refused) return;
      const kept = size <= limit ? chunk : chunk.subarray(0, Math.max(0, limit - before));
      if (!lease.take(kept.length)) return refuse('busy');
      if (kept.length > 0) chunks.push(kept);
      if (size > limit) refuse('truncated');
    };
    const declared = Number(req.headers['content-length']);
    // A body declared too large is not kept at all when it is drained: none of it would be used.
    if (excess === 'drain' && Number.isFinite(declared) && declared > limit) refused = 'truncated';
    req.on('data', onData);
    req.on('end', () => {
      if (excess === 'drain' || !refused) settle();
    });
    req.on('error', reject);
  });
}
