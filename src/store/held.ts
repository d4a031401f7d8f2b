import type { Capture } from './capture.js';

/**
 * Told of a new or changed capture; `text`, its JSON.stringify when the store has it at hand (made once for the
 * journal: the page's messages carry it rather than serialize the capture again).
 */
export type CaptureListener = (capture: Capture, text?: string) => void;

/**
 * Told of every change to the held captures as it is made, in order (src/story/'s StoryBook keeps each
 * event's summary so): a capture added, changed (its answer, a pin) or let go (retention, Clear).
 */
export interface CaptureObserver {
  added(capture: Capture): void;
  changed(before: Capture, after: Capture): void;
  removed(capture: Capture): void;
}

/**
 * The captures the store holds, found by id and by event, and who is told as they change: its observers (see
 * CaptureObserver) and its listeners (every new or changed capture, for the page).
 */
export class HeldCaptures {
  readonly #byId = new Map<string, Capture>();
  /** The ids of the held captures of each envelope id, oldest first. */
  readonly #byEventId = new Map<string, string[]>();
  readonly #listeners = new Set<CaptureListener>();
  readonly #observers = new Set<CaptureObserver>();

  get(id: string): Capture | undefined {
    return this.#byId.get(id);
  }

  has(id: string): boolean {
    return this.#byId.has(id);
  }

  /** The held captures of an event, oldest first. */
  ofEvent(eventId: string): Capture[] {
    return (this.#byEventId.get(eventId) ?? []).map((id) => this.#byId.get(id) as Capture);
  }

  /** A capture now held (newer than every one held), told to the observers unless `quietly` (at open). */
  add(capture: Capture, { quietly = false } = {}): void {
    this.#byId.set(capture.id, capture);
    const eventId = capture.envelope?.id;
    if (eventId) {
      const ids = this.#byEventId.get(eventId);
      if (ids) ids.push(capture.id);
      else this.#byEventId.set(eventId, [capture.id]);
    }
    if (!quietly) for (const observer of this.#observers) observer.added(capture);
  }

  /** A held capture replaced by `next` (the same id). */
  replace(current: Capture, next: Capture): void {
    this.#byId.set(next.id, next);
    for (const observer of this.#observers) observer.changed(current, next);
  }

  /** Call once `capture` is out of the captures. */
  remove(capture: Capture): void {
    for (const observer of this.#observers) observer.removed(capture);
    this.#byId.delete(capture.id);
    const eventId = capture.envelope?.id;
    const ids = eventId ? this.#byEventId.get(eventId) : undefined;
    if (!eventId || !ids) return;
    // Retention drops the oldest first: its id is at the front.
    if (ids[0] === capture.id) ids.shift();
    else {
      const at = ids.indexOf(capture.id);
      if (at !== -1) ids.splice(at, 1);
    }
    if (ids.length === 0) this.#byEventId.delete(eventId);
  }

  /** Tells `observer` of every capture of `held` (oldest first), then of every change; returns the way to stop. */
  observe(observer: CaptureObserver, held: readonly Capture[]): () => void {
    for (const capture of held) observer.added(capture);
    this.#observers.add(observer);
    return () => this.#observers.delete(observer);
  }

  /** Calls `listener` with every new or changed capture; returns the unsubscribe function. */
  subscribe(listener: CaptureListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Tells the listeners of a new or changed capture, with its text when there is one (see CaptureListener). */
  emit(capture: Capture, text?: string): void {
    for (const listener of this.#listeners) listener(capture, text);
  }
}
