// What became of a capture, its status shown and its tones are decided in src/shared/verdict.ts, which the page
// loads too; the story tells them with each capture (see book.ts), and adds what needs the store.
import type { Capture } from '../store/index.js';
import { type Outcome, outcomeOf } from '../shared/verdict.js';

export {
  answerOutcome,
  endpointTone,
  type Outcome,
  outcomeOf,
  outcomeTone,
  signatureTone,
  statusShown,
  statusTone,
  type Tone,
  type Verdict,
  verdictOf,
} from '../shared/verdict.js';
export const OUTCOMES: readonly Outcome[] = ['2xx', 'failed', 'rejected'];

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
