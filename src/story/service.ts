import type { DeliveryOutlook } from '../api/index.js';
import type { EventRecord } from '../contract/index.js';
import type { Capture } from '../store/index.js';
import type { EventStory, ServiceView } from './event-story.js';
import { eventStoryOf } from './story.js';
import { isTaken } from '../contract/index.js';

/**
 * The service's view of an event (its delivery attempts and what comes next, see deliveryOutlook), for
 * one endpoint when `endpointId` is given (a listen's), else for all of them: delivered when each took its
 * latest attempt; else failing (with the soonest next attempt), given up or disabled.
 */
export function serviceViewOf(event: EventRecord, outlook: DeliveryOutlook[], endpointId?: number): ServiceView {
  const attempts = event.delivery_attempts.filter((a) => endpointId === undefined || a.endpointId === endpointId);
  const mine = outlook.filter((o) => endpointId === undefined || o.endpointId === endpointId);
  if (attempts.length === 0) return {};
  const latest = new Map(attempts.map((a) => [a.endpointId, a.statusCode]));
  if ([...latest.values()].every(isTaken)) return { delivered: true };
  const next = mine
    .flatMap((o) => (o.next === 'attempt' ? [{ attempt: o.attempt, dueAt: o.dueAt }] : []))
    .sort((a, b) => (a.dueAt ?? Infinity) - (b.dueAt ?? Infinity))[0];
  if (next) return { next };
  const ended = mine.find((o) => o.next === 'none');
  return ended?.next === 'none' ? { ended: ended.reason } : {};
}

/**
 * `events get`'s story of an event: from the captures of it held here (a listen's folder), with the
 * service's view for the listen's endpoint; or, where there are none, the service's view alone.
 */
export function serviceEventStory(
  event: EventRecord,
  outlook: DeliveryOutlook[],
  { captures = [], endpointId, now = Date.now() }: { captures?: readonly Capture[]; endpointId?: number; now?: number },
): EventStory {
  const story = eventStoryOf(event.id, captures, { now, service: serviceViewOf(event, outlook, endpointId) });
  return Object.assign({}, story, { eventId: event.id, type: event.type });
}
