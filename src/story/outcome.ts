import { isTaken } from '../contract/index.js';
import type { Capture } from '../store/index.js';
import type { Tone } from './words.js';

/** What became of a capture: the app took it (or clockhook answered 200 with no app), did not, or clockhook refused it. */
export type Outcome = '2xx' | 'failed' | 'rejected' | 'pending';
export const OUTCOMES: readonly Outcome[] = ['2xx', 'failed', 'rejected'];

export function outcomeOf(capture: Capture): Outcome {
  if (capture.rejected) return 'rejected';
  if (capture.forward === null) return '2xx';
  if (capture.forward === undefined) return 'pending';
  return answerOutcome(capture.forward.statusCode, { cut: capture.forward.cut });
}

/**
 * The outcome of an answer the sender got: `refused` when clockhook answered it itself (a refused signature,
 * a full budget); an answer cut short never reached the sender whole, so whatever its status line said, it
 * failed.
 */
export function answerOutcome(
  status: number | null,
  { cut = false, refused = false }: { cut?: boolean; refused?: boolean } = {},
): Outcome {
  if (refused) return 'rejected';
  return isTaken(status) && !cut ? '2xx' : 'failed';
}

/** The colour class of an outcome (see Tone): refused by clockhook is plain, as is one still with the app. */
export function outcomeTone(outcome: Outcome): Tone {
  if (outcome === '2xx') return 'ok';
  return outcome === 'failed' ? 'bad' : 'plain';
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
