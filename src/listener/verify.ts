import { verifySignature } from '../contract/index.js';
import type { CaptureSignature } from '../store/index.js';

/**
 * Step "verify": the signature of the raw bytes, as the capture records it. With no secret known (none
 * given, no endpoint registered) it is `unchecked`; `missing` and `invalid` carry the reason and a hint.
 */
export function verifyDelivery(
  header: string | string[] | undefined,
  bytes: Buffer,
  { secret, tolerance, now }: { secret: string | null; tolerance: number; now: () => number },
): CaptureSignature {
  if (secret === null) return { status: 'unchecked' };
  const result = verifySignature({ header, payload: bytes, secret, tolerance, now });
  const { timestamp } = result;
  const age = timestamp === undefined ? {} : { timestamp, ageSeconds: Math.round(now() / 1000 - timestamp) };
  if (result.ok) return { status: 'valid', ...age };
  const status = result.reason === 'missing_header' ? 'missing' : 'invalid';
  return { status, reason: result.reason, hint: result.hint, ...age };
}
