// The verdict on one capture's answer, decided once: what became of it (its outcome), the status every surface
// shows, the tone they paint it in, and the tone of its signature verdict. The story (src/story/) tells it with
// each capture on the terminal, in --json and to the MCP tools; the page renders the same through
// /shared/verdict.js (the inspector serves this file's build), so no surface picks a colour or a word itself.
// Pure, with no import, for that reason.

/**
 * The colour class of a word of the story, the same on every surface, each painting it its own way (the
 * terminal: ok green, bad red, warn yellow, info cyan, plain grey; the page: its badge and chip classes).
 */
export type Tone = 'ok' | 'bad' | 'warn' | 'info' | 'plain';

/**
 * What became of a capture: the app took it with a 2xx (or clockhook answered 200 with no app), it did not (an
 * error status, no answer, an answer cut short), clockhook refused it itself, or it is still with the app.
 */
export type Outcome = '2xx' | 'failed' | 'rejected' | 'pending';

/** What the verdict reads of a capture (a stored one, or one in a page's message). */
export interface AnswerFacts {
  rejected: { statusCode: number; code: string } | null;
  /** null: captured only, nothing forwarded; absent: the app has not answered yet. */
  forward?: { statusCode: number | null; cut?: boolean; durationMs: number } | null;
  /** The `--filter` rule that kept it from the app (clockhook answered 200). */
  filtered?: string;
}

/** The verdict on a capture's answer, as every surface shows it. */
export interface Verdict {
  outcome: Outcome;
  /**
   * The status shown: the app's ('200', '500'), '200 cut' for an answer cut short, 'no answer' when the app gave
   * none (the sender got clockhook's 502 or 504 in its place), '…' while it is still with the app, and the
   * status of a refusal by clockhook ('401'); '200' for a capture-only listen, which answers itself, and
   * 'filtered' for a delivery a `--filter` kept from the app (answered 200 too).
   */
  status: string;
  /** The tone of the outcome. */
  tone: Tone;
  /** How long the app took, measured once, by the forward; null when nothing was forwarded (or not yet). */
  durationMs: number | null;
}

/**
 * Whether a receiver's answer took a delivery: a 2xx status (the contract's "Delivery" rules 2 and 3; null, no
 * answer or a time-out, is a failed attempt). The one test of it, wherever an answer is judged.
 */
export const isTaken = (statusCode: number | null | undefined): statusCode is number =>
  typeof statusCode === 'number' && statusCode >= 200 && statusCode < 300;

/**
 * The outcome of an answer: `refused` when clockhook answered it itself (a refused signature, a full budget);
 * an answer cut short never reached the sender whole, so whatever its status line said, it failed.
 */
export function answerOutcome(
  status: number | null,
  { cut = false, refused = false }: { cut?: boolean; refused?: boolean } = {},
): Outcome {
  if (refused) return 'rejected';
  return isTaken(status) && !cut ? '2xx' : 'failed';
}

/** The tone of an outcome: refused by clockhook is plain, as is one still with the app. */
export function outcomeTone(outcome: Outcome): Tone {
  if (outcome === '2xx') return 'ok';
  return outcome === 'failed' ? 'bad' : 'plain';
}

/** What became of a capture (see Outcome). */
export function outcomeOf(capture: AnswerFacts): Outcome {
  if (capture.rejected) return 'rejected';
  if (capture.forward === null) return '2xx';
  if (capture.forward === undefined) return 'pending';
  return answerOutcome(capture.forward.statusCode, { cut: capture.forward.cut });
}

/** The status shown of an answer (see Verdict.status). */
export function statusShown(status: number | null, { cut = false, pending = false } = {}): string {
  if (pending) return '…';
  if (status === null) return 'no answer';
  return cut ? `${status} cut` : String(status);
}

/** The verdict on a capture's answer. */
export function verdictOf(capture: AnswerFacts): Verdict {
  const outcome = outcomeOf(capture);
  const { forward, rejected } = capture;
  if (capture.filtered && !rejected) return { outcome, status: 'filtered', tone: 'plain', durationMs: null };
  const status = rejected
    ? String(rejected.statusCode)
    : forward === null
      ? '200'
      : statusShown(forward?.statusCode ?? null, { cut: forward?.cut, pending: forward === undefined });
  return { outcome, status, tone: outcomeTone(outcome), durationMs: forward?.durationMs ?? null };
}

/**
 * The tone of a signature verdict: valid is ok; unchecked (no secret known) a warning, since nothing vouches
 * for the delivery; missing or invalid bad.
 */
export function signatureTone(status: string): Tone {
  if (status === 'valid') return 'ok';
  return status === 'unchecked' ? 'warn' : 'bad';
}

/** The tone of an endpoint's status: enabled is ok; disabled (or any other) means nothing is delivered to it. */
export const endpointTone = (status: string): Tone => (status === 'enabled' ? 'ok' : 'bad');

/** The tone of a status an API or a receiver answered with, where no capture is judged (a sandbox's attempt line, a check). */
export const statusTone = (status: number | null | undefined): Tone => (isTaken(status) ? 'ok' : 'bad');
