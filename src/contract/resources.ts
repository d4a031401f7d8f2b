/** REST resources of the contract (camelCase), with the DESIGN.md answers to what it leaves open. */

export type EndpointStatus = 'enabled' | 'disabled';

export interface WebhookEndpoint {
  id: number;
  object?: 'webhook_endpoint';
  url: string;
  /** The subscription. The contract names it both ways; clients normalize to this field. */
  enabledEvents: string[];
  description?: string | null;
  status: EndpointStatus | string;
  /** Only in the create response. */
  secret?: string;
  [field: string]: unknown;
}

/** One delivery attempt (DESIGN.md: delivery attempt entry). */
export interface DeliveryAttempt {
  attempt: number;
  endpointId: number;
  /** null on time-out or refused connection. */
  statusCode: number | null;
  /** At most 4000 characters. */
  responseBody: string;
  durationMs: number;
  error: string | null;
  createdAt: string;
}

export interface EventRecord {
  id: string;
  object?: 'event';
  type: string;
  apiVersion?: string;
  created?: number;
  data?: Record<string, unknown>;
  /** The one snake_case name of the REST API. */
  delivery_attempts: DeliveryAttempt[];
  [field: string]: unknown;
}

export interface PingAcknowledgement {
  eventId: string;
  endpointId: number;
  object: 'webhook_endpoint_ping';
  message: string;
}

export interface RedeliveryAcknowledgement {
  eventId: string;
  endpointsNotified: number;
  object: 'webhook_event_redelivery';
  message: string;
}

export interface DeletedEndpoint {
  id: number;
  object: 'webhook_endpoint';
  deleted: true;
}

export interface ListPage<T> {
  data: T[];
  hasMore: boolean;
  nextCursor: string | null;
}

/** DESIGN.md's list wrapper (the contract does not show page sizes): `limit` is 20 unless given, at most 100. */
export const LIST_PAGE = { defaultLimit: 20, maxLimit: 100 } as const;

/** Whether a receiver's answer took a delivery (a 2xx): the one test, shared with the page (see src/shared/verdict.ts). */
export { isTaken } from '../shared/verdict.js';
/**
 * Whether a receiver's answer reads as a refused signature: the statuses handlers refuse a delivery they
 * could not verify with (400, 401, 403). The listener and check both say "another secret?" on them.
 */
export const isSignatureRefusal = (status: number) => status === 400 || status === 401 || status === 403;
