// The words of a delivery's story, the same on every surface: listen's terminal and --json, the captures
// commands, the HAR, events get, the page and the MCP tools. docs/inspector.md has them in a table.
import type { DeliveryKind } from '../store/index.js';
import { durationWords, LIMITS } from '../contract/index.js';
import type { Tone } from '../shared/verdict.js';

/**
 * An event's state, from the service's newest delivery held here plus what was done here: delivered (the app
 * took that delivery, or a replay since); failing (it did not); given up (the service made its five attempts);
 * disabled (nothing comes while the endpoint is disabled); missed (it never reached this listen); pending (that
 * delivery is still with the app); rejected (a request clockhook refused that carries no event: unsigned, or not
 * an envelope; nobody sends it again, and its replays do not make it an event). A replay that failed changes none.
 */
export type EventState = 'pending' | 'delivered' | 'failing' | 'given-up' | 'disabled' | 'missed' | 'rejected';

/** The service's next attempt at an event, when one is due. */
export interface NextAttempt {
  /** Which attempt of five. */
  attempt: number;
  /** When it is due (ms since the epoch), when the previous attempt's time could be read. */
  dueAt: number | null;
}

/** The words of a capture's kind: "first delivery", "retry 2", "duplicate (the app had taken it)", … */
export function kindWords(kind: DeliveryKind, retry?: number): string {
  switch (kind) {
    case 'first':
      return 'first delivery';
    case 'retry':
      return retry === undefined ? 'retry' : `retry ${retry}`;
    case 'duplicate':
      return 'duplicate (the app had taken it)';
    case 'replay':
      return 'replay';
    case 'edited-replay':
      return 'edited replay';
  }
}

/**
 * How long until `at`, as a person reads it: "in under a minute", "in 4 min", "in 2 h"; "any moment now"
 * once due (the service lists an attempt only once it completes).
 * Every "next in" goes through here, already scaled by a sandbox's --time-scale.
 */
export function inTime(at: number, now: number): string {
  const ms = at - now;
  if (ms <= 0) return 'any moment now';
  return ms < 60_000 ? 'in under a minute' : `in ${durationWords(ms)}`;
}

/** "attempt 2 of 5". */
export const attemptOf = (attempt: number) => `attempt ${attempt} of ${LIMITS.deliveryAttempts}`;

/** That the service made every attempt it makes: the one wording of giving up, on every surface. */
export const GIVEN_UP = `the service gave up after its ${LIMITS.deliveryAttempts} attempts`;

/**
 * What the service does next with an event, in words: it tries again (when, where known: `at` puts the time in
 * as a surface shows it, else it is said from now) or, with no next attempt, that it gave up. The one sentence
 * of it, from the attempt number (see nextAttemptAfter): never "tries again" after the last attempt.
 */
export function nextWords(
  next: NextAttempt | null,
  { now = Date.now(), at }: { now?: number; at?: (ms: number) => string } = {},
): string {
  if (!next) return GIVEN_UP;
  const when = next.dueAt === null ? '' : at ? ` at ${at(next.dueAt)}` : ` ${inTime(next.dueAt, now)}`;
  return `the service tries again${when} (${attemptOf(next.attempt)})`;
}

/** The words of an event's state, with when the service tries next when that is known. */
export function stateWords(state: EventState, next: NextAttempt | null, now: number): string {
  switch (state) {
    case 'pending':
      return 'on its way (no answer yet)';
    case 'delivered': {
      // Taken here by a replay while the service's own attempt failed: it still comes, as a duplicate.
      if (!next) return 'delivered';
      const tries = nextWords(next, { now }).replace('the service tries again', 'the service still tries again');
      return `delivered here by a replay; ${tries}, and that delivery arrives as a duplicate`;
    }
    case 'failing':
      return next ? `failing: ${nextWords(next, { now })}` : 'failing';
    case 'given-up':
      return `given up: ${GIVEN_UP}`;
    case 'disabled':
      return 'disabled: nothing comes while the endpoint is disabled';
    case 'missed':
      return 'missed: it never reached this listen';
    case 'rejected':
      return 'rejected: it carries no event (unsigned, or not an envelope), so nothing sends it again';
  }
}

/** A capture's kind: a duplicate is the one a handler must deduplicate; a replay is clockhook's own. */
export function kindTone(kind: DeliveryKind): Tone {
  if (kind === 'duplicate') return 'warn';
  return kind === 'replay' || kind === 'edited-replay' ? 'info' : 'plain';
}

/** An event's state. */
export function stateTone(state: EventState): Tone {
  if (state === 'delivered') return 'ok';
  if (state === 'missed') return 'warn';
  return state === 'pending' || state === 'rejected' ? 'plain' : 'bad';
}
