// The service's delivery attempts of an event, asked for when shown and again until the answered deliveries are listed.
import { answered, heldCapture, heldCaptures, scheduleRender, state } from './state.js';
import { act } from './connection.js';

export async function loadAttempts(eventId) {
  const result = await act({ type: 'attempts', eventId });
  const record = result.ok ? result.data : { error: result.error };
  state.attempts.set(eventId, record);
  scheduleRender({ detail: true });
  return record;
}

/**
 * The service must list at least one attempt for each delivery of the event that the page holds and that was
 * answered (it may list more: to other endpoints, or deliveries retention dropped). A replay is not the
 * service's doing.
 */
export function deliveriesAnswered(eventId) {
  let count = 0;
  for (const capture of heldCaptures()) {
    if (capture.source === 'delivery' && capture.envelope?.id === eventId && answered(capture)) count++;
  }
  return count;
}

/**
 * A delivery of an event has been answered, so the service is about to list one more attempt of it. The
 * attempts shown for it are asked for again until they are there; those of an event not shown are
 * forgotten, and asked for when it is selected.
 */
export function deliveryAnswered(capture) {
  const eventId = capture.envelope?.id;
  if (capture.source !== 'delivery' || !eventId || !state.attempts.has(eventId)) return;
  if (heldCapture(state.selected)?.envelope?.id === eventId) awaitAttempts(eventId);
  else state.attempts.delete(eventId);
}

/** Watches the event's attempts when the service lists fewer than the answered deliveries the page holds. */
export function awaitAttempts(eventId) {
  const count = deliveriesAnswered(eventId);
  const record = state.attempts.get(eventId);
  if (record && !record.error && record.delivery_attempts.length < count) watchAttempts(eventId, count);
}

/**
 * The service lists an attempt only once it is complete, a moment after the delivery was answered. So the
 * page asks for the event's attempts 0.5, 1, 2, 4 and 8 s later, until it lists `count` of them or asking
 * fails; Refresh is there for anything slower. One watch per event: a second one raises its count.
 */
export async function watchAttempts(eventId, count) {
  const watched = state.awaitedAttempts.has(eventId);
  state.awaitedAttempts.set(eventId, Math.max(count, state.awaitedAttempts.get(eventId) ?? 0));
  if (watched) return;
  try {
    for (const waitMs of [500, 1000, 2000, 4000, 8000]) {
      await new Promise((resolve) => setTimeout(resolve, waitMs));
      const record = await loadAttempts(eventId);
      if (record.error || record.delivery_attempts.length >= state.awaitedAttempts.get(eventId)) return;
    }
  } finally {
    state.awaitedAttempts.delete(eventId);
  }
}
