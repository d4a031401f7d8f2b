// The story of each delivery as clockhook decided it (src/story/): what each capture of an event was and
// what state the event is in come with the captures, and the page renders them without deciding anything.

import { state } from './state.js';

/** The key an event's story is kept under: its event id, or the capture's own id when it has none. */
export const storyKey = (capture) => capture.envelope?.id ?? capture.id;

/**
 * Keeps the stories clockhook sent: each replaces the one of its event, and carries what the captures of its
 * message were, which are added to those told before (a capture's kind never changes once decided).
 */
export function keepStories(stories) {
  for (const story of stories ?? []) {
    const before = state.stories.get(story.key);
    if (before) story.deliveries = Object.assign(before.deliveries, story.deliveries);
    state.stories.set(story.key, story);
  }
}

/** The story of a capture's event: { state, words, failed, latest, resend, deliveries }, or undefined. */
export const eventStoryOf = (capture) => state.stories.get(storyKey(capture));

/** What a capture was for its event: { kind, retry, words }, or undefined. */
export const deliveryStoryOf = (capture) => eventStoryOf(capture)?.deliveries[capture.id];

/** The words of a capture's kind for a row's badge; null for a first delivery, which is the usual case. */
export function storyLabel(capture) {
  const story = deliveryStoryOf(capture);
  return story && story.kind !== 'first' ? story.words : null;
}

/** Whether a capture is in the one failed set: the newest capture of an event whose latest did not get a 2xx. */
export function failedNow(capture) {
  const story = eventStoryOf(capture);
  return Boolean(story?.failed && story.latest === capture.id);
}
