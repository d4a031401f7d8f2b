// The story of each delivery, decided here once: what each capture of an event was, and what state the
// event is in. Every surface renders these; none decides again (DESIGN.md, "One word, one meaning").
// A running listen keeps a StoryBook of its store (book.ts), updated as each capture comes; these are the
// same rules over a list of captures, for the captures commands and the MCP tools, which read the store whole.
import type { Capture } from '../store/index.js';
import { type CaptureStory, captureStoryIn, StoryBook } from './book.js';
import { type EventStory, type ServiceView, storyKey, tellStory } from './event-story.js';
import { type Decided, summaryOf } from './summary.js';

/**
 * What a capture arriving now is, given the captures of its event held before it (any order): the first
 * delivery; a retry; a duplicate once the app had taken an earlier delivery or replay with a 2xx before
 * this one arrived; a replay, edited when its body was changed.
 */
export function decideKind(
  capture: Pick<Capture, 'source' | 'receivedAt'>,
  held: readonly Capture[],
  { edited = false }: { edited?: boolean } = {},
): Decided {
  return summaryOf('', held).decide(capture, edited);
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
  const summary = captures.length > 0 ? summaryOf(key, captures) : undefined;
  return tellStory(key, summary, { now, service, captures });
}

/** The story of every event among `captures`, by key (see storyKey), each with every capture of it. */
export function storiesOf(captures: readonly Capture[], now = Date.now()): Map<string, EventStory> {
  return StoryBook.of(captures).everyStory(now);
}

/** Whether a capture is one the failed set shows: the newest capture of an event whose story is failed. */
export function isFailedNow(capture: Capture, stories: ReadonlyMap<string, EventStory>): boolean {
  const story = stories.get(storyKey(capture));
  return story !== undefined && story.failed && story.latest === capture.id;
}

/**
 * The one "failed" set, as `replay --failed`, `captures list --status failed` and the page's Failed filter
 * take it: of each event whose newest delivery failed, with no replay taken since, the capture a replay sends,
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

/** The story of one capture, from the stories of the captures it is among. */
export function captureStoryOf(capture: Capture, stories: ReadonlyMap<string, EventStory>): CaptureStory {
  return captureStoryIn(capture, stories.get(storyKey(capture)) ?? eventStoryOf(storyKey(capture), [capture]));
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
  return Object.assign({}, capture, { duplicateOf, story });
}
