// What each delivery of an event was, in words that are true: the first delivery; a retry (the service
// tried again because the app did not take the one before); a duplicate (the app had taken an earlier
// delivery of this event id with a 2xx, so it must not act on this one); a replay, or an edited replay
// (its body differs from the capture it replays). The service's retries and its redeliveries through the
// API look alike on the wire: both are "retry" after a failure and "duplicate" after a 2xx.

import { outcome } from './chart.js';

const oldestFirst = (a, b) => (a.id < b.id ? -1 : 1);

/**
 * For each capture with an event id: { kind: 'first' | 'retry' | 'duplicate' | 'replay' | 'edited', n,
 * latest } where `n` counts retries and `latest` says the delivery is its event's newest (replays aside).
 */
export function deliveryStories(captures) {
  const byId = new Map(captures.map((capture) => [capture.id, capture]));
  const byEvent = new Map();
  for (const capture of captures) {
    const eventId = capture.envelope?.id;
    if (!eventId) continue;
    if (!byEvent.has(eventId)) byEvent.set(eventId, []);
    byEvent.get(eventId).push(capture);
  }
  const stories = new Map();
  for (const deliveries of byEvent.values()) {
    deliveries.sort(oldestFirst);
    let taken = false;
    let retries = 0;
    let first = true;
    let latest = null;
    for (const capture of deliveries) {
      if (capture.source === 'replay') {
        const original = byId.get(capture.replayOf);
        const edited = original !== undefined && original.body !== capture.body;
        stories.set(capture.id, { kind: edited ? 'edited' : 'replay', latest: false });
        continue;
      }
      const kind = first ? 'first' : taken ? 'duplicate' : 'retry';
      if (kind === 'retry') retries += 1;
      stories.set(capture.id, { kind, n: kind === 'retry' ? retries : 0, latest: false });
      first = false;
      latest = capture;
      if (outcome(capture) === 'ok') taken = true;
    }
    if (latest) stories.get(latest.id).latest = true;
  }
  return stories;
}

/** The words of a story for a row's badge; null for a first delivery, which is the usual case. */
export function storyLabel(story) {
  if (!story) return null;
  if (story.kind === 'retry') return `retry ${story.n}`;
  if (story.kind === 'edited') return 'edited replay';
  return story.kind === 'first' ? null : story.kind;
}

/**
 * Whether a capture counts as failed for the "Failed" filter: the latest delivery of its event failed
 * (at the app, or refused by clockhook); a capture with no event id, when it failed itself.
 */
export function failedNow(capture, story) {
  const result = outcome(capture);
  if (result !== 'failed' && result !== 'rejected') return false;
  return story ? story.latest : capture.source === 'delivery';
}
