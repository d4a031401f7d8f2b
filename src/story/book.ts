// The stories of a store's events, kept as the store changes: one summary per event (see summary.ts), updated
// in O(1) when a capture is added, answered or let go, so that deciding what a new capture is and telling an
// event's state never reads the event's other captures again (issue 52).
import type { Capture, CaptureObserver, CaptureStore } from '../store/index.js';
import { captureWords, deliveryStoryOf, eventState, type EventStory, storyKey, tellStory } from './event-story.js';
import { answerExcerpt } from '../shared/excerpt.js';
import { signatureTone, type Tone, type Verdict, verdictOf } from '../shared/verdict.js';
import { stateTone } from './words.js';
import { byArrival, type Decided, EventSummary, type Lookup, summaryOf } from './summary.js';

/**
 * A capture's story as it travels with the capture, the one judgement every surface renders (listen's line and
 * --json, the captures commands, the MCP tools, the testing library): what it was for its event (kind and
 * words), the verdict on its answer (outcome, status shown, tone, the app's time: see Verdict), the tone of its
 * signature, the gist of what the app said when it did not take it, and its event's state.
 */
export interface CaptureStory extends Verdict {
  kind: Decided['kind'];
  retry?: number;
  words: string;
  signatureTone: Tone;
  /**
   * What the app said when it did not take it (see answerExcerpt), or the filter that kept it from the app
   * (`taken out by --filter type=punch.*`); null otherwise.
   */
  answer: string | null;
  event: { state: EventStory['state']; words: string; tone: Tone; failed: boolean; latest: boolean };
}

/** The summaries of the events of a set of captures, by story key. */
export class StoryBook implements CaptureObserver {
  readonly #events = new Map<string, EventSummary>();
  readonly #get: Lookup;
  readonly #now: () => number;

  constructor(get: Lookup, now: () => number = Date.now) {
    this.#get = get;
    this.#now = now;
  }

  /** The book of a store's captures, kept up to date with it from now on. */
  static watching(store: CaptureStore, now?: () => number): StoryBook {
    const book = new StoryBook((id) => store.get(id), now);
    store.observe(book);
    return book;
  }

  /** The book of a list of captures (a store read from its file, say), in any order. */
  static of(captures: readonly Capture[], now?: () => number): StoryBook {
    const byId = new Map(captures.map((c) => [c.id, c]));
    const book = new StoryBook((id) => byId.get(id), now);
    for (const capture of byArrival(captures)) book.added(capture);
    return book;
  }

  added(capture: Capture): void {
    const key = storyKey(capture);
    let summary = this.#events.get(key);
    if (!summary) this.#events.set(key, (summary = new EventSummary(key, this.#get)));
    summary.add(capture);
  }

  changed(before: Capture, after: Capture): void {
    this.#events.get(storyKey(after))?.change(before, after);
  }

  removed(capture: Capture): void {
    const key = storyKey(capture);
    const summary = this.#events.get(key);
    if (!summary) return;
    summary.remove(capture);
    if (summary.size === 0) this.#events.delete(key);
  }

  /** What a capture arriving now is for its event (see EventSummary.decide); stored with it by the listener. */
  decide(capture: Pick<Capture, 'source' | 'receivedAt' | 'envelope'>, { edited = false } = {}): Decided {
    const summary = capture.envelope ? this.#events.get(capture.envelope.id) : undefined;
    return (summary ?? new EventSummary('', this.#get)).decide(capture, edited);
  }

  /** Whether any capture of the event is held. */
  holds(eventId: string): boolean {
    return this.#events.has(eventId);
  }

  /**
   * The story of each event of `captures`, with what each of them was, and with the newest `recent` captures
   * of the event besides (the page's messages: a bounded few, so that a message costs the same whatever the
   * event holds; the page keeps what it was told before).
   */
  storiesOf(captures: readonly Capture[], { now = this.#now(), recent = 0 } = {}): Map<string, EventStory> {
    const groups = new Map<string, Capture[]>();
    for (const capture of captures) {
      const key = storyKey(capture);
      const group = groups.get(key);
      if (group) group.push(capture);
      else groups.set(key, [capture]);
    }
    return new Map(
      [...groups].map(([key, group]) => [key, this.story(key, this.#withRecent(key, group, recent), now)]),
    );
  }

  /** `captures` of the event `key`, and its newest `recent` held ones not among them. */
  #withRecent(key: string, captures: Capture[], recent: number): Capture[] {
    const ids = this.#events.get(key)?.ids;
    if (!ids || recent === 0) return captures;
    const given = new Set(captures.map((c) => c.id));
    const newest = ids.slice(-recent).filter((id) => !given.has(id));
    return [...newest.map((id) => this.#get(id) as Capture), ...captures];
  }

  /** The story of every event held, each with every capture of it. */
  everyStory(now = this.#now()): Map<string, EventStory> {
    const stories = new Map<string, EventStory>();
    for (const [key, summary] of this.#events) {
      const captures = summary.ids.map((id) => this.#get(id) as Capture);
      stories.set(key, tellStory(key, summary, { now, captures }));
    }
    return stories;
  }

  /** The story of one event, with what each of `captures` (held ones of it) was. */
  story(key: string, captures: readonly Capture[] = [], now = this.#now()): EventStory {
    // Captures not held (refused before they were stored, or let go since): a story of their own.
    const summary = this.#events.get(key) ?? (captures.length > 0 ? summaryOf(key, captures) : undefined);
    return tellStory(key, summary, { now, captures });
  }

  /** The story of one capture: what it was, and its event's state. */
  captureStory(capture: Capture, now = this.#now()): CaptureStory {
    const key = storyKey(capture);
    const summary = this.#events.get(key);
    if (!summary) return captureStoryIn(capture, this.story(key, [capture], now));
    // Told from the summary alone, as the event's story would tell it, without the rest of that story (the
    // listener tells one for every delivery it answers).
    const { kind, retry } = summary.kindOf(capture);
    const latest = summary.latest === capture.id;
    const words = captureWords(capture, kind, retry);
    return storyOf(capture, { kind, retry, words }, eventState(summary, {}, now), latest);
  }
}

/**
 * A capture's story: what it was, in words, the verdict on its answer, and its event's state (`latest`: its
 * newest capture is this one).
 */
function storyOf(
  capture: Capture,
  { kind, retry, words }: Pick<CaptureStory, 'kind' | 'retry' | 'words'>,
  { state, words: said, failed }: Omit<CaptureStory['event'], 'latest' | 'tone'>,
  latest: boolean,
): CaptureStory {
  const { outcome, status, tone, durationMs } = verdictOf(capture);
  const { forward } = capture;
  const appSaid = outcome === 'failed' && forward && forward.statusCode !== null ? answerExcerpt(forward) : null;
  const answer = capture.filtered ? `taken out by --filter ${capture.filtered}` : appSaid;
  // One literal of one shape, made for every delivery listen reports: spreads would make each anew (see
  // docs/performance-notes.md, "Hidden classes").
  const story: CaptureStory = {
    kind,
    words,
    outcome,
    status,
    tone,
    durationMs,
    signatureTone: signatureTone(capture.signature.status),
    answer,
    event: { state, words: said, tone: stateTone(state), failed, latest },
  };
  if (retry !== undefined) story.retry = retry;
  return story;
}

/** A capture's story from its event's story (which carries the capture's delivery, when it is held). */
export function captureStoryIn(capture: Capture, story: EventStory): CaptureStory {
  const delivery = story.deliveries[capture.id] ?? deliveryStoryOf(summaryOf(story.key, [capture]), capture);
  return storyOf(capture, delivery, story, story.latest === capture.id);
}
