import { type DeliveryAttempt, type EventRecord, nextAttemptAfter, PING_EVENT_TYPE } from '../contract/index.js';
import type { ApiClient } from './client.js';
import { ApiError } from './error.js';
import { isTaken } from '../contract/index.js';

/** An endpoint's state as far as its deliveries go; unknown when it could not be read. */
export type EndpointState = 'enabled' | 'disabled' | 'deleted' | 'unknown';

/**
 * What comes next for one endpoint whose latest attempt at an event failed, by the contract's retry
 * policy (the API itself does not say): the next attempt and when it is due (`dueAt` null when the
 * attempt's time cannot be read), or none: the fifth attempt failed, or the endpoint is disabled (a
 * disabled endpoint is excluded from deliveries; a ping reaches it all the same) or deleted.
 */
export type DeliveryOutlook =
  | { endpointId: number; next: 'attempt'; attempt: number; after: number; delayMs: number; dueAt: number | null }
  | { endpointId: number; next: 'none'; reason: 'gave-up' | 'disabled' | 'deleted' };

const failed = (attempt: DeliveryAttempt) => !isTaken(attempt.statusCode);

/** The latest attempt for each endpoint of the event, where that attempt failed. */
function latestFailures(event: EventRecord): DeliveryAttempt[] {
  const latest = new Map<number, DeliveryAttempt>();
  for (const attempt of event.delivery_attempts) latest.set(attempt.endpointId, attempt);
  return [...latest.values()].filter(failed);
}

/**
 * What comes next for each endpoint whose latest attempt at `event` failed. `timeScale` multiplies the
 * contract's delays (a sandbox's --time-scale); `endpoints` holds what is known of their state.
 */
export function deliveryOutlook(
  event: EventRecord,
  { timeScale = 1, endpoints = new Map() }: { timeScale?: number; endpoints?: Map<number, EndpointState> } = {},
): DeliveryOutlook[] {
  return latestFailures(event).flatMap((last): DeliveryOutlook[] => {
    const { endpointId } = last;
    const state = endpoints.get(endpointId);
    if (state === 'deleted') return [{ endpointId, next: 'none', reason: 'deleted' }];
    if (state === 'disabled' && event.type !== PING_EVENT_TYPE)
      return [{ endpointId, next: 'none', reason: 'disabled' }];
    // The contract does not show an attempt's field names: without its number, which comes next is unknown.
    if (!Number.isInteger(last.attempt) || last.attempt < 1) return [];
    const next = nextAttemptAfter(last.attempt, { failedAt: Date.parse(last.createdAt), timeScale });
    if (!next) return [{ endpointId, next: 'none', reason: 'gave-up' }];
    return [{ endpointId, next: 'attempt', after: last.attempt, ...next }];
  });
}

/** The outlook of `event`, with the state of each endpoint it failed at read from the API (one request each). */
export async function readDeliveryOutlook(
  client: ApiClient,
  event: EventRecord,
  timeScale = 1,
): Promise<DeliveryOutlook[]> {
  // An endpoint named otherwise than by its id (the contract does not show the field) is not looked up.
  const ids = latestFailures(event)
    .map((attempt) => attempt.endpointId)
    .filter((id) => Number.isInteger(id));
  const states = await Promise.all(
    ids.map((id) =>
      client.getEndpoint(id).then(
        (endpoint): EndpointState => (endpoint.status === 'disabled' ? 'disabled' : 'enabled'),
        (error: unknown): EndpointState => (error instanceof ApiError && error.status === 404 ? 'deleted' : 'unknown'),
      ),
    ),
  );
  return deliveryOutlook(event, { timeScale, endpoints: new Map(ids.map((id, i) => [id, states[i]])) });
}

/** An event that came while listen was off and has not reached this endpoint. */
export interface MissedEvent {
  eventId: string;
  type: string;
  /** Unix seconds, as the envelope's. */
  created: number;
  /** What the service does next for this endpoint; `none: no-attempt` while its first attempt is still to come. */
  outlook: MissedOutlook;
}

/** `events get`'s outlook without the endpoint (it is this one), or the first attempt still to come. */
export type MissedOutlook =
  | (DeliveryOutlook extends infer O ? (O extends DeliveryOutlook ? Omit<O, 'endpointId'> : never) : never)
  | { next: 'attempt'; attempt: 1 };
