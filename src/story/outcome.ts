import type { Capture } from '../store/index.js';

/** What became of a capture: the app took it (or clockhook answered 200 with no app), did not, or clockhook refused it. */
export type Outcome = '2xx' | 'failed' | 'rejected' | 'pending';
export const OUTCOMES: readonly Outcome[] = ['2xx', 'failed', 'rejected'];

export function outcomeOf(capture: Capture): Outcome {
  if (capture.rejected) return 'rejected';
  if (capture.forward === null) return '2xx';
  if (capture.forward === undefined) return 'pending';
  const status = capture.forward.statusCode;
  // An answer cut short never reached the sender whole: whatever its status line said, it failed.
  return status !== null && status >= 200 && status < 300 && !capture.forward.cut ? '2xx' : 'failed';
}

/** The status the sender got, when it is known (not for an app that did not answer). */
export function statusOf(capture: Capture): number | null {
  if (capture.rejected) return capture.rejected.statusCode;
  if (capture.forward === null) return 200;
  return capture.forward?.statusCode ?? null;
}

/**
 * When the app took a capture with a 2xx (ms since the epoch), or null when it did not (yet). A repeat that
 * arrives after this moment is a duplicate; one that arrives while the app still works on the first, or
 * after it failed, is a retry.
 */
export function takenAt(capture: Capture): number | null {
  if (outcomeOf(capture) !== '2xx') return null;
  return Date.parse(capture.receivedAt) + (capture.forward?.durationMs ?? 0);
}
