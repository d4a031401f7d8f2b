// The story of each delivery, decided here once: what each capture of an event was, and what state the
// event is in. Every surface renders these; none decides again (DESIGN.md, "One word, one meaning").
import type { Capture, DeliveryKind } from '../store/index.js';
import { outcomeOf, takenAt } from './outcome.js';
import { type EventState, kindWords, type NextAttempt, stateWords } from './words.js';

/** What one capture was for its event. */
export interface DeliveryStory {
  kind: DeliveryKind;
  /** For a retry: which one (1 for the first); absent when earlier deliveries were not kept. */
  retry?: number;
  words: string;
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
  /** Whether it is in the one "failed" set: its latest delivery or replay did not get a 2xx. */
  failed: boolean;
  /** The capture that decides the state (the newest), null for a missed event. */
  latest: string | null;
  /** What a replay of the event sends: its newest delivery from the service (else its newest capture). */
  resend: string | null;
  /** Each capture of it, by id. */
  deliveries: Record<string, DeliveryStory>;
}

/** The key a capture's story is kept under: its event id, or its own id when it has none. */
export const storyKey = (capture: Pick<Capture, 'id' | 'envelope'>): string => capture.envelope?.id ?? capture.id;

type Decided = Pick<Capture, 'kind' | 'retry' | 'duplicateOf' | 'repeatOf'>;

/**
 * What a capture arriving now is, given the captures of its event held before it (any order): the first
 * delivery; a retry; a duplicate once the app had taken an earlier delivery or replay with a 2xx before
 * this one arrived; a replay, edited when its body was changed. The listener stores it with the capture.
 */
export function decideKind(
  capture: Pick<Capture, 'source' | 'receivedAt'>,
  held: readonly Capture[],
  { edited = false }: { edited?: boolean } = {},
): Decided & { kind: DeliveryKind } {
  return kindAfter(capture, withKinds([...held].sort((a, b) => (a.id < b.id ? -1 : 1))), edited);
}

/** `decideKind` after `earlier`, oldest first, whose kinds are known. */
function kindAfter(
  capture: Pick<Capture, 'source' | 'receivedAt'>,
  earlier: readonly (Capture & { kind: DeliveryKind })[],
  edited: boolean,
): Decided & { kind: DeliveryKind } {
  if (capture.source === 'replay') return { kind: edited ? 'edited-replay' : 'replay', duplicateOf: null };
  if (earlier.length === 0) return { kind: 'first', repeatOf: null, duplicateOf: null };
  const arrived = Date.parse(capture.receivedAt);
  const taken = earlier.find((c) => {
    const at = takenAt(c);
    return at !== null && at <= arrived;
  });
  const repeatOf = earlier[0].id;
  if (taken) return { kind: 'duplicate', repeatOf, duplicateOf: taken.id };
  const retries = earlier.filter((c) => c.kind === 'retry').length;
  // The first was let go (retention, Clear): count on from the newest retry kept.
  const lastRetry = earlier.findLast((c) => c.kind === 'retry')?.retry;
  const first = earlier.some((c) => c.kind === 'first');
  const retry = first ? retries + 1 : lastRetry === undefined ? undefined : lastRetry + 1;
  return { kind: 'retry', ...(retry === undefined ? {} : { retry }), repeatOf, duplicateOf: null };
}

/**
 * The captures of one event, oldest first, each with its kind: as stored, or for a capture stored before
 * kinds were kept, worked out from those before it (a replay is edited when its body differs from the one it
 * replays; a delivery whose earlier ones are gone counts as a retry).
 */
function withKinds(captures: readonly Capture[]): (Capture & { kind: DeliveryKind })[] {
  const done: (Capture & { kind: DeliveryKind })[] = [];
  for (const capture of captures) {
    if (capture.kind) {
      done.push(capture as Capture & { kind: DeliveryKind });
      continue;
    }
    const original = capture.replayOf ? done.find((c) => c.id === capture.replayOf) : undefined;
    const edited = original !== undefined && original.body !== capture.body;
    const decided = kindAfter(capture, done, edited);
    // Without its earlier deliveries, an old record that named one (`duplicateOf`) was not a first.
    const orphan = decided.kind === 'first' && capture.duplicateOf;
    done.push({ ...capture, ...decided, ...(orphan ? { kind: 'retry' as const } : {}) });
  }
  return done;
}

/** The state of an event that has no capture here: the service's view alone. */
function serviceState(service: ServiceView): { state: EventState; next: NextAttempt | null } {
  if (service.missed) return { state: 'missed', next: service.next ?? null };
  if (service.delivered) return { state: 'delivered', next: null };
  if (service.ended === 'gave-up') return { state: 'given-up', next: null };
  if (service.ended === 'disabled') return { state: 'disabled', next: null };
  if (service.next || service.ended) return { state: 'failing', next: service.next ?? null };
  return { state: 'pending', next: null };
}

/** The state of an event from its captures (oldest first) and what the service says, where it was asked. */
function stateOf(latest: Capture | undefined, service: ServiceView): { state: EventState; next: NextAttempt | null } {
  if (!latest) return serviceState(service);
  const outcome = outcomeOf(latest);
  if (outcome === 'pending') return { state: 'pending', next: null };
  if (outcome === '2xx') return { state: 'delivered', next: null };
  if (service.ended === 'gave-up') return { state: 'given-up', next: null };
  if (service.ended === 'disabled') return { state: 'disabled', next: null };
  return { state: 'failing', next: service.next ?? null };
}

/**
 * The story of one event from its captures (any order) and, where it was asked, the service's view of it.
 * With no capture, it is the service's view alone (a missed event).
 */
export function eventStoryOf(
  key: string,
  captures: readonly Capture[],
  { now = Date.now(), service = {} }: { now?: number; service?: ServiceView } = {},
): EventStory {
  const ordered = withKinds([...captures].sort((a, b) => (a.id < b.id ? -1 : 1)));
  const latest = ordered.at(-1);
  const { state, next } = stateOf(latest, service);
  const deliveries: Record<string, DeliveryStory> = {};
  for (const c of ordered)
    deliveries[c.id] = {
      kind: c.kind,
      ...(c.retry === undefined ? {} : { retry: c.retry }),
      words: kindWords(c.kind, c.retry),
    };
  const resend = ordered.findLast((c) => c.source === 'delivery') ?? latest;
  return {
    key,
    eventId: latest?.envelope?.id ?? (service.missed ? key : null),
    type: latest?.envelope?.type ?? null,
    state,
    words: stateWords(state, next, now),
    next,
    failed: state === 'failing' || state === 'given-up' || state === 'disabled',
    latest: latest?.id ?? null,
    resend: resend?.id ?? null,
    deliveries,
  };
}

/** The story of every event among `captures`, by key (see storyKey). */
export function storiesOf(captures: readonly Capture[], now = Date.now()): Map<string, EventStory> {
  const byKey = new Map<string, Capture[]>();
  for (const capture of captures) {
    const key = storyKey(capture);
    const group = byKey.get(key);
    if (group) group.push(capture);
    else byKey.set(key, [capture]);
  }
  return new Map([...byKey].map(([key, group]) => [key, eventStoryOf(key, group, { now })]));
}

/** Whether a capture is one the failed set shows: the newest capture of an event whose story is failed. */
export function isFailedNow(capture: Capture, stories: ReadonlyMap<string, EventStory>): boolean {
  const story = stories.get(storyKey(capture));
  return story !== undefined && story.failed && story.latest === capture.id;
}

/**
 * The one "failed" set, as `replay --failed`, `captures list --status failed` and the page's Failed filter
 * take it: of each event whose latest delivery or replay did not get a 2xx, the capture a replay sends,
 * oldest first. An event taken later, by a retry or a replay, is not among them.
 */
export function failedToResend(
  captures: readonly Capture[],
  stories: ReadonlyMap<string, EventStory> = storiesOf(captures),
): Capture[] {
  const byId = new Map(captures.map((c) => [c.id, c]));
  return [...stories.values()]
    .filter((story) => story.failed && story.resend !== null)
    .map((story) => byId.get(story.resend as string) as Capture)
    .sort((a, b) => (a.id < b.id ? -1 : 1));
}

/** A capture's story as it travels with the capture: its kind and words, and its event's state. */
export interface CaptureStory extends DeliveryStory {
  event: { state: EventState; words: string; failed: boolean; latest: boolean };
}

/** The story of one capture, from the stories of the captures it is among. */
export function captureStoryOf(capture: Capture, stories: ReadonlyMap<string, EventStory>): CaptureStory {
  const story = stories.get(storyKey(capture)) ?? eventStoryOf(storyKey(capture), [capture]);
  const { state, words, failed, latest } = story;
  return { ...story.deliveries[capture.id], event: { state, words, failed, latest: latest === capture.id } };
}

/**
 * The stories of the events of `captures`, each made of every capture of it held (`ofEvent`, as
 * CaptureStore's): for a few captures of a large store, without a pass over all of it.
 */
export function storiesAmong(
  captures: readonly Capture[],
  ofEvent: (eventId: string) => readonly Capture[],
  now = Date.now(),
): Map<string, EventStory> {
  const stories = new Map<string, EventStory>();
  for (const capture of captures) {
    const key = storyKey(capture);
    if (stories.has(key)) continue;
    const held = capture.envelope ? ofEvent(capture.envelope.id) : [];
    const group = held.some((c) => c.id === capture.id) ? held : [...held, capture];
    stories.set(key, eventStoryOf(key, group, { now }));
  }
  return stories;
}

/**
 * A capture as every surface gives it (`captures list/show --json`, NDJSON exports, the HAR): as stored,
 * with `story`, and `duplicateOf` only when it is true (stores written before kinds were kept named any
 * earlier delivery there).
 */
export function withStory(
  capture: Capture,
  stories: ReadonlyMap<string, EventStory>,
): Capture & { story: CaptureStory } {
  const story = captureStoryOf(capture, stories);
  const duplicateOf = story.kind === 'duplicate' ? capture.duplicateOf : null;
  return { ...capture, duplicateOf, story };
}
