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
  // To a tenth of a second: the verdict is made on the exact age, and a rounded one could say 300 of a 300.4 s refusal.
  const ageSeconds = timestamp === undefined ? 0 : Math.round((now() / 1000 - timestamp) * 10) / 10;
  const age = timestamp === undefined ? {} : { timestamp, ageSeconds };
  if (result.ok) return { status: 'valid', ...age };
  const status = result.reason === 'missing_header' ? 'missing' : 'invalid';
  return { status, reason: result.reason, hint: result.hint, ...age };
}
