// An event's story as every surface gets it, told from its summary (see summary.ts): the state of the event
// from its newest capture and what the service says, and what each capture an answer carries was for it.
import type { Capture, DeliveryKind } from '../store/index.js';
import { nextAttemptAfter } from '../contract/index.js';
import { type Outcome, outcomeOf } from './outcome.js';
import type { EventSummary } from './summary.js';
import type { Tone } from '../shared/verdict.js';
import { type EventState, kindTone, kindWords, type NextAttempt, stateTone, stateWords } from './words.js';

/** What one capture was for its event, and what became of it, with their colour classes for the page. */
export interface DeliveryStory {
  kind: DeliveryKind;
  /** For a retry: which one (1 for the first); absent when earlier deliveries were not kept. */
  retry?: number;
  words: string;
  /** The colour class of its kind (see kindTone). */
  tone: Tone;
  /** What became of it (see outcomeOf): the page's chart counts it so. */
  outcome: Outcome;
}

/** What the service says of an event for this listen's endpoint, where it was asked. */
export interface ServiceView {
  /** The event never reached this listen (see listen's missed list). */
  missed?: boolean;
  /** Every endpoint asked about took its latest attempt. */
  delivered?: boolean;
  /** What the service does next, from its delivery attempts (see deliveryOutlook); null: nothing is due. */
  next?: NextAttempt | null;
  /** Why nothing more comes, when the service says so. */
  ended?: 'gave-up' | 'disabled' | 'deleted';
}

/** An event's story: one per event id, or per capture with no event id. */
export interface EventStory {
  /** The event id, or the id of a capture that has none. */
  key: string;
  eventId: string | null;
  type: string | null;
  state: EventState;
  words: string;
  /** When the service tries next, when known. */
  next: NextAttempt | null;
  /** Whether it is in the one "failed" set: failing, given up or disabled (a failed replay puts none there). */
  failed: boolean;
  /** The colour class of its state (see stateTone). */
  tone: Tone;
  /** The capture that decides the state (the newest), null for a missed event. */
  latest: string | null;
  /** What a replay of the event sends: its newest delivery from the service (else its newest capture). */
  resend: string | null;
  /**
   * What each capture of it that comes with the story was, by id: every capture held, for the captures
   * commands; the ones a message carries, for the page, which keeps those it was told before.
   */
  deliveries: Record<string, DeliveryStory>;
}

/** The key a capture's story is kept under: its event id, or its own id when it has none. */
export const storyKey = (capture: Pick<Capture, 'id' | 'envelope'>): string => capture.envelope?.id ?? capture.id;

/** The state of an event that has no capture here: the service's view alone. */
function serviceState(service: ServiceView): { state: EventState; next: NextAttempt | null } {
  if (service.missed) return { state: 'missed', next: service.next ?? null };
  if (service.delivered) return { state: 'delivered', next: null };
  if (service.ended === 'gave-up') return { state: 'given-up', next: null };
  if (service.ended === 'disabled') return { state: 'disabled', next: null };
  if (service.next || service.ended) return { state: 'failing', next: service.next ?? null };
  return { state: 'pending', next: null };
}

/** A request clockhook refused that is no delivery of an event: no envelope, or no signature at all. */
export const carriesNoEvent = (capture: Capture) =>
  capture.rejected !== null && (!capture.envelope || capture.signature.status === 'missing');

/**
 * The service's attempt number of a delivery held, from what it was for its event (the first delivery is attempt
 * 1, retry n attempt n + 1); null where that is not known (a duplicate, a retry whose earlier ones were let go).
 */
function attemptOfDelivery(summary: EventSummary, delivery: Capture): number | null {
  const { kind, retry } = summary.kindOf(delivery);
  if (kind === 'first') return 1;
  return kind === 'retry' && retry !== undefined ? retry + 1 : null;
}

/**
 * What the service does next after its newest delivery here failed: the service's view where it was asked; else
 * told from the attempt number of the deliveries held, by the retry table (not when: a sandbox's --time-scale is
 * not known here). `null` with `gaveUp`: that was its last attempt.
 */
function afterFailure(summary: EventSummary, delivery: Capture, service: ServiceView) {
  if (service.next) return { next: service.next, gaveUp: false };
  const attempt = attemptOfDelivery(summary, delivery);
  if (attempt === null) return { next: null, gaveUp: false };
  const next = nextAttemptAfter(attempt);
  return { next: next && { attempt: next.attempt, dueAt: null }, gaveUp: next === null };
}

/**
 * The state of an event from what the service did (its newest delivery held here) and what the service says,
 * where it was asked; what was done here only adds to it: a replay the app took says the event was delivered
 * here (while the service may still try again), and a replay that failed leaves the event as the service left
 * it (a delivered event stays delivered). A request that carries no event stays rejected, whatever its replays did.
 */
function stateOf(
  summary: EventSummary | undefined,
  service: ServiceView,
): { state: EventState; next: NextAttempt | null } {
  const latest = summary?.latestCapture();
  if (!summary || !latest) return serviceState(service);
  const resend = summary.resend === null ? undefined : summary.get(summary.resend);
  // Only replays held (the deliveries let go): the newest of them tells; one of no event is outside the events.
  const delivery = resend?.source === 'delivery' ? resend : undefined;
  if (!delivery) return replaysOnly(latest);
  const outcome = outcomeOf(delivery);
  if (outcome === 'pending') return { state: 'pending', next: null };
  if (carriesNoEvent(delivery)) return { state: 'rejected', next: null };
  if (outcome === '2xx' || service.delivered) return { state: 'delivered', next: null };
  const { next, gaveUp } = service.ended ? { next: null, gaveUp: false } : afterFailure(summary, delivery, service);
  // Taken here by a replay since: delivered here, while the service may still try again.
  if (summary.takenAfter(delivery.id)) return { state: 'delivered', next };
  if (service.ended === 'gave-up' || gaveUp) return { state: 'given-up', next: null };
  if (service.ended === 'disabled') return { state: 'disabled', next: null };
  return { state: 'failing', next };
}

/** The state told by replays alone: a replay of no event is rejected; else as its outcome says. */
function replaysOnly(latest: Capture): { state: EventState; next: NextAttempt | null } {
  if (!latest.envelope || carriesNoEvent(latest)) return { state: 'rejected', next: null };
  const outcome = outcomeOf(latest);
  if (outcome === 'pending') return { state: 'pending', next: null };
  return { state: outcome === '2xx' ? 'delivered' : 'failing', next: null };
}

/**
 * What a capture was, in words: its kind's (see kindWords), except a request clockhook refused that carries no
 * event, which was no delivery of one: "rejected request", never "first delivery".
 */
export const captureWords = (capture: Capture, kind: DeliveryKind, retry?: number): string =>
  kind === 'first' && carriesNoEvent(capture) ? 'rejected request' : kindWords(kind, retry);

/** What a held capture was for its event, in words. */
export function deliveryStoryOf(summary: EventSummary, capture: Capture): DeliveryStory {
  const { kind, retry } = summary.kindOf(capture);
  const outcome = outcomeOf(capture);
  return {
    kind,
    ...(retry === undefined ? {} : { retry }),
    words: captureWords(capture, kind, retry),
    tone: kindTone(kind),
    outcome,
  };
}

/** An event's state, in words, and whether it is failed, from its summary and what the service says. */
export function eventState(
  summary: EventSummary | undefined,
  service: ServiceView,
  now: number,
): { state: EventState; next: NextAttempt | null; words: string; failed: boolean } {
  const { state, next } = stateOf(summary, service);
  const failed = state === 'failing' || state === 'given-up' || state === 'disabled';
  return { state, next, words: stateWords(state, next, now), failed };
}

/**
 * The story of the event `key` from its summary (none: no capture of it is held) and, where it was asked,
 * the service's view, with what each of `captures` (held ones of it) was.
 */
export function tellStory(
  key: string,
  summary: EventSummary | undefined,
  { now, service = {}, captures = [] }: { now: number; service?: ServiceView; captures?: readonly Capture[] },
): EventStory {
  const latest = summary?.latestCapture();
  const { state, next, words, failed } = eventState(summary, service, now);
  // Keyed by capture ids, a new one each time: a dictionary from the start (no prototype), or V8 would make a
  // hidden class for each id added (docs/performance-notes.md, "Hidden classes").
  const deliveries: Record<string, DeliveryStory> = Object.create(null);
  if (summary) for (const capture of captures) deliveries[capture.id] = deliveryStoryOf(summary, capture);
  return {
    key,
    eventId: latest?.envelope?.id ?? (service.missed ? key : null),
    type: latest?.envelope?.type ?? null,
    state,
    words,
    tone: stateTone(state),
    next,
    failed,
    latest: latest?.id ?? null,
    resend: summary?.resend ?? null,
    deliveries,
  };
}
