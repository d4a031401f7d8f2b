// What the story keeps of one event, so that a new capture of it is decided, and the event's state told,
// without reading its captures again: a thousand captures of one event cost the next delivery what the first
// did (issue 52). Kept up to date as each capture comes, is answered and goes (see StoryBook).
import type { Capture, DeliveryKind } from '../store/index.js';
import { takenAt } from './outcome.js';

/** A capture's kind as decided, with what goes with it (stored on the capture by the listener). */
export type Decided = Pick<Capture, 'retry' | 'duplicateOf' | 'repeatOf'> & { kind: DeliveryKind };

/** The kind of a held capture, and its number for a retry. */
export type KindOf = Pick<Capture, 'retry'> & { kind: DeliveryKind };

/** A held capture by id. */
export type Lookup = (id: string) => Capture | undefined;

/** One event's summary: its captures' ids in order, and counts that answer the story's questions in O(1). */
export class EventSummary {
  /** The held captures, oldest first (the oldest is what a repeat names as `repeatOf`). */
  readonly ids: string[] = [];
  /** Those the app took with a 2xx (see takenAt), oldest first: the first one taken before an arrival makes it a duplicate. */
  readonly #taken: string[] = [];
  /** How many held captures are first deliveries, and how many are retries. */
  #firsts = 0;
  #retries = 0;
  /** The newest held retry, and its number when it has one. */
  #lastRetry: { id: string; retry: number | undefined } | null = null;
  /** The newest held delivery from the service: what a replay of the event sends. */
  #newestDelivery: string | null = null;
  /** Kinds worked out for captures stored before kinds were kept (see add), by id. */
  /** Made when first needed: most stores hold no such capture, and a store holds a summary per event. */
  #worked: Map<string, KindOf> | null = null;

  constructor(
    readonly key: string,
    /** A held capture by id. */
    readonly get: Lookup,
  ) {}

  get size(): number {
    return this.ids.length;
  }

  /** The newest held capture: it decides the event's state. */
  get latest(): string | null {
    return this.ids.at(-1) ?? null;
  }

  /** The newest held capture itself. */
  latestCapture(): Capture | undefined {
    const id = this.latest;
    return id === null ? undefined : this.get(id);
  }

  /** Whether the app took (2xx) a capture of the event that arrived after capture `id`. */
  takenAfter(id: string): boolean {
    const newest = this.#taken.at(-1);
    return newest !== undefined && newest > id;
  }

  /** What a replay of the event sends: its newest delivery from the service, else its newest capture. */
  get resend(): string | null {
    return this.#newestDelivery ?? this.latest;
  }

  /**
   * What a capture arriving now is, after the ones held: the first delivery; a duplicate once the app had
   * taken an earlier delivery or replay with a 2xx before this one arrived (arrival + the app's time); else a
   * retry, numbered on from the first delivery (or from the newest retry held when the first was let go); a
   * replay, edited when its body was changed.
   */
  decide(capture: Pick<Capture, 'source' | 'receivedAt'>, edited = false): Decided {
    if (capture.source === 'replay') return { kind: edited ? 'edited-replay' : 'replay', duplicateOf: null };
    if (this.ids.length === 0) return { kind: 'first', repeatOf: null, duplicateOf: null };
    const arrived = Date.parse(capture.receivedAt);
    const repeatOf = this.ids[0];
    const taken = this.#taken.find((id) => {
      const at = takenAt(this.get(id) as Capture);
      return at !== null && at <= arrived;
    });
    if (taken) return { kind: 'duplicate', repeatOf, duplicateOf: taken };
    const lastRetry = this.#lastRetry?.retry;
    const retry = this.#firsts > 0 ? this.#retries + 1 : lastRetry === undefined ? undefined : lastRetry + 1;
    return { kind: 'retry', ...(retry === undefined ? {} : { retry }), repeatOf, duplicateOf: null };
  }

  /** A held capture's kind: as stored, or as worked out when it was added. */
  kindOf(capture: Capture): KindOf {
    if (capture.kind) return { kind: capture.kind, retry: capture.retry };
    return this.#worked?.get(capture.id) ?? { kind: 'first' };
  }

  /** Takes in a capture newer than every one held. */
  add(capture: Capture): void {
    const kind = capture.kind ? this.kindOf(capture) : this.#workOut(capture);
    this.ids.push(capture.id);
    if (kind.kind === 'first') this.#firsts += 1;
    if (kind.kind === 'retry') {
      this.#retries += 1;
      this.#lastRetry = { id: capture.id, retry: kind.retry };
    }
    if (capture.source === 'delivery') this.#newestDelivery = capture.id;
    if (takenAt(capture) !== null) this.#takeIn(capture.id);
  }

  /**
   * The kind of a capture stored before kinds were kept, from those before it: a replay is edited when its
   * body differs from the one it replays; a delivery whose earlier ones are gone, but which named one
   * (`duplicateOf`), counts as a retry.
   */
  #workOut(capture: Capture): KindOf {
    const original = capture.replayOf ? this.get(capture.replayOf) : undefined;
    const earlier = original !== undefined && original.id < capture.id && this.ids.includes(original.id);
    const decided = this.decide(capture, earlier && original.body !== capture.body);
    const orphan = decided.kind === 'first' && capture.duplicateOf;
    const kind: KindOf = orphan ? { kind: 'retry' } : decided;
    (this.#worked ??= new Map()).set(capture.id, kind);
    return kind;
  }

  /** A held capture changed (its answer came): whether the app took it may have changed. */
  change(before: Capture, after: Capture): void {
    const was = takenAt(before) !== null;
    const is = takenAt(after) !== null;
    if (was && !is) this.#takeOut(after.id);
    else if (is && !was) this.#takeIn(after.id);
  }

  /** Lets a held capture go: the oldest (retention) at once, any other (Clear) by looking for it. */
  remove(capture: Capture): void {
    const { id } = capture;
    if (this.ids[0] === id) this.ids.shift();
    else {
      const at = this.ids.lastIndexOf(id);
      if (at === -1) return;
      this.ids.splice(at, 1);
    }
    // Its last capture gone, the summary goes too (see StoryBook.removed): nothing more to keep.
    if (this.ids.length === 0) return;
    if (takenAt(capture) !== null) this.#takeOut(id);
    const { kind } = this.kindOf(capture);
    if (kind === 'first') this.#firsts -= 1;
    if (kind === 'retry') this.#retries -= 1;
    this.#worked?.delete(id);
    if (this.#lastRetry?.id === id) this.#lastRetry = this.#newest((c) => this.kindOf(c).kind === 'retry');
    if (this.#newestDelivery === id) this.#newestDelivery = this.#newest((c) => c.source === 'delivery')?.id ?? null;
  }

  /** The newest held capture that `matches`, with its retry number (after a removal: rare, and short). */
  #newest(matches: (capture: Capture) => boolean): { id: string; retry: number | undefined } | null {
    for (let i = this.ids.length - 1; i >= 0; i--) {
      const capture = this.get(this.ids[i]) as Capture;
      if (matches(capture)) return { id: capture.id, retry: this.kindOf(capture).retry };
    }
    return null;
  }

  /** Into the taken ones, in id order (an answer usually comes to the newest: looked for from the end). */
  #takeIn(id: string): void {
    let at = this.#taken.length;
    while (at > 0 && this.#taken[at - 1] > id) at -= 1;
    this.#taken.splice(at, 0, id);
  }

  #takeOut(id: string): void {
    if (this.#taken[0] === id) this.#taken.shift();
    else {
      const at = this.#taken.lastIndexOf(id);
      if (at !== -1) this.#taken.splice(at, 1);
    }
  }
}

/** The summary of one event made of `captures` (any order), as if each had been added as it arrived. */
export function summaryOf(key: string, captures: readonly Capture[]): EventSummary {
  const byId = new Map(captures.map((c) => [c.id, c]));
  const summary = new EventSummary(key, (id) => byId.get(id));
  for (const capture of byArrival(captures)) summary.add(capture);
  return summary;
}

/** Captures oldest first: sorting ids sorts by arrival (see newCaptureId). */
export const byArrival = (captures: readonly Capture[]): Capture[] =>
  [...captures].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
