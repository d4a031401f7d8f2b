import { counted } from '../counted.js';
import {
  isKnownEventType,
  type FieldError,
  LIST_PAGE,
  matchesSubscription,
  PING_EVENT_TYPE,
  validateSubscription,
  type WebhookEndpoint,
} from '../contract/index.js';
import { invalidParam, notFound, SandboxError } from './errors.js';
import { ENDPOINTS_PER_ACCOUNT, TRIAL_CAPS, usageInLastDay } from './limits.js';
import {
  dropOldestEvents,
  type EndpointRecord,
  type EventRecordStored,
  newEventId,
  newSecret,
  type SandboxData,
} from './state.js';

/** What a route handler sees: the state, the caller's account, its parsed body and query. */
export interface RouteContext {
  data: SandboxData;
  account: string;
  plan: string;
  body: Record<string, unknown>;
  query: URLSearchParams;
  now: number;
  apiVersion: string;
  /** Events kept (the newest; see dropOldestEvents). */
  maxEvents: number;
  /** Hands a new or redelivered event to the delivery worker. */
  deliver(event: EventRecordStored, endpoints: EndpointRecord[]): void;
  /** Stops pending deliveries to a deleted endpoint. */
  cancelDeliveries(endpointId: number): void;
}

export interface RouteResult {
  status: number;
  body: unknown;
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);
const DESCRIPTION_MAX = 500;

export function endpointJson(endpoint: EndpointRecord, withSecret = false): WebhookEndpoint {
  const { account: _account, secret, ...visible } = endpoint;
  return { object: 'webhook_endpoint', ...visible, ...(withSecret ? { secret } : {}) };
}

export function eventJson(event: EventRecordStored) {
  return {
    id: event.id,
    object: 'event',
    type: event.type,
    apiVersion: event.apiVersion,
    created: event.created,
    data: event.data,
    delivery_attempts: [...event.delivery_attempts],
  };
}

function checkUrl(value: unknown): FieldError | null {
  if (typeof value !== 'string' || value.trim() === '') return { field: 'url', message: 'url is required' };
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return { field: 'url', message: 'url must be a valid URL' };
  }
  if (url.protocol === 'https:') return null;
  // DESIGN.md: plain HTTP only for loopback hosts, so local flows need no certificates.
  if (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname)) return null;
  return { field: 'url', message: 'url must be an HTTPS URL (plain HTTP is accepted for loopback hosts only)' };
}

/** Both names of the subscription field are accepted (contract); giving both with different values is an error. */
function subscriptionField(body: Record<string, unknown>): { value: unknown; field: string } | undefined {
  const hasEnabled = body.enabledEvents !== undefined;
  const hasTypes = body.eventTypes !== undefined;
  if (hasEnabled && hasTypes && JSON.stringify(body.enabledEvents) !== JSON.stringify(body.eventTypes)) {
    throw invalidParam(
      'enabledEvents',
      'give the subscription as enabledEvents or eventTypes, not both with different values',
    );
  }
  if (hasEnabled) return { value: body.enabledEvents, field: 'enabledEvents' };
  if (hasTypes) return { value: body.eventTypes, field: 'eventTypes' };
  return undefined;
}

const ENDPOINT_FIELDS = new Set(['url', 'enabledEvents', 'eventTypes', 'description', 'status']);

/** Validates the fields present in a create or update body; collects every problem at once. */
function validateEndpointBody(body: Record<string, unknown>, mode: 'create' | 'update') {
  const errors: FieldError[] = [];
  for (const key of Object.keys(body)) {
    if (!ENDPOINT_FIELDS.has(key) || (mode === 'create' && key === 'status')) {
      errors.push({ field: key, message: `${key} is not a field of a webhook endpoint ${mode}` });
    }
  }
  if (mode === 'create' || body.url !== undefined) {
    const problem = checkUrl(body.url);
    if (problem) errors.push(problem);
  }
  const subscription = subscriptionField(body);
  let enabledEvents: string[] | undefined;
  if (subscription) {
    const check = validateSubscription(subscription.value);
    if (check.ok) enabledEvents = check.types;
    else errors.push({ field: subscription.field, message: `${subscription.field} ${check.message}` });
  } else if (mode === 'create') {
    errors.push({
      field: 'enabledEvents',
      message: 'enabledEvents (or eventTypes) is required: a list of event types, or ["*"]',
    });
  }
  if (body.description !== undefined && body.description !== null) {
    if (typeof body.description !== 'string')
      errors.push({ field: 'description', message: 'description must be a string' });
    else if (body.description.length > DESCRIPTION_MAX) {
      errors.push({ field: 'description', message: `description must be at most ${DESCRIPTION_MAX} characters` });
    }
  }
  if (body.status !== undefined && body.status !== 'enabled' && body.status !== 'disabled') {
    errors.push({ field: 'status', message: 'status must be enabled or disabled' });
  }
  if (errors.length > 0) throw invalidParam(errors[0].field, errors.map((e) => e.message).join('; '), errors);
  return { enabledEvents };
}

function findEndpoint(ctx: RouteContext, rawId: string): EndpointRecord {
  const id = /^\d+$/.test(rawId) ? Number(rawId) : Number.NaN;
  const endpoint = ctx.data.endpoints.find((e) => e.id === id && e.account === ctx.account);
  if (!endpoint) throw notFound(`webhook endpoint ${rawId}`);
  return endpoint;
}

function findEvent(ctx: RouteContext, id: string): EventRecordStored {
  const event = ctx.data.events.find((e) => e.id === id && e.account === ctx.account);
  if (!event) throw notFound(`event ${id}`);
  return event;
}

/** DESIGN.md list wrapper: newest first, `limit` (default 20, max 100), opaque `cursor`. */
function page<T>(
  items: T[],
  order: (item: T) => number,
  query: URLSearchParams,
  map: (item: T) => unknown,
): RouteResult {
  const rawLimit = query.get('limit');
  const limit = rawLimit === null ? LIST_PAGE.defaultLimit : Number(rawLimit);
  if (!Number.isInteger(limit) || limit < 1 || limit > LIST_PAGE.maxLimit) {
    throw invalidParam('limit', `limit must be an integer from 1 to ${LIST_PAGE.maxLimit}`);
  }
  const rawCursor = query.get('cursor');
  let before = Number.POSITIVE_INFINITY;
  if (rawCursor) {
    before = Number(Buffer.from(rawCursor, 'base64url').toString());
    if (!Number.isInteger(before))
      throw invalidParam('cursor', 'cursor is not one this API returned: pass nextCursor as is');
  }
  const sorted = items.filter((item) => order(item) < before).sort((a, b) => order(b) - order(a));
  const data = sorted.slice(0, limit);
  const hasMore = sorted.length > limit;
  const nextCursor = hasMore ? Buffer.from(String(order(data[data.length - 1]))).toString('base64url') : null;
  return { status: 200, body: { object: 'list', data: data.map(map), hasMore, nextCursor } };
}

export function listEndpoints(ctx: RouteContext): RouteResult {
  const mine = ctx.data.endpoints.filter((e) => e.account === ctx.account);
  return page(
    mine,
    (e) => e.id,
    ctx.query,
    (e) => endpointJson(e),
  );
}

export function getEndpoint(ctx: RouteContext, id: string): RouteResult {
  return { status: 200, body: endpointJson(findEndpoint(ctx, id)) };
}

export function createEndpoint(ctx: RouteContext): RouteResult {
  const { enabledEvents } = validateEndpointBody(ctx.body, 'create');
  const mine = ctx.data.endpoints.filter((e) => e.account === ctx.account);
  if (ctx.plan === 'trial') {
    if (mine.length >= TRIAL_CAPS.endpointsTotal) {
      throw new SandboxError(
        429,
        'rate_limit_error',
        'trial_resource_limit_exceeded',
        `Trial accounts may hold ${TRIAL_CAPS.endpointsTotal} webhook endpoints. Delete one or upgrade.`,
      );
    }
    if (usageInLastDay(ctx.data.usage, ctx.account, 'endpoint_create', ctx.now) >= TRIAL_CAPS.endpointCreationsPerDay) {
      throw new SandboxError(
        429,
        'rate_limit_error',
        'trial_resource_daily_limit_exceeded',
        `Trial accounts may create ${TRIAL_CAPS.endpointCreationsPerDay} webhook endpoints per rolling 24 hours.`,
      );
    }
  }
  if (mine.length >= ENDPOINTS_PER_ACCOUNT) {
    throw new SandboxError(
      400,
      'invalid_request_error',
      'endpoint_limit_reached',
      `An account may hold at most ${ENDPOINTS_PER_ACCOUNT} webhook endpoints. Delete one first.`,
    );
  }
  const url = String(ctx.body.url);
  if (mine.some((e) => e.url === url)) {
    throw urlTaken(url);
  }
  const at = new Date(ctx.now).toISOString();
  const endpoint: EndpointRecord = {
    id: ctx.data.nextEndpointId++,
    account: ctx.account,
    url,
    enabledEvents: enabledEvents ?? [],
    description: (ctx.body.description as string | undefined) ?? null,
    status: 'enabled',
    secret: newSecret(),
    consecutiveFailures: 0,
    createdAt: at,
    updatedAt: at,
  };
  ctx.data.endpoints.push(endpoint);
  ctx.data.usage.push({ account: ctx.account, kind: 'endpoint_create', at: ctx.now });
  return { status: 201, body: endpointJson(endpoint, true) };
}

/** DESIGN.md's answer to a duplicate create (or an update onto another endpoint's URL): 409 idempotency_conflict. */
const urlTaken = (url: string) =>
  new SandboxError(
    409,
    'invalid_request_error',
    'idempotency_conflict',
    `A webhook endpoint for ${url} exists already in this account.`,
    {
      param: 'url',
    },
  );

export function updateEndpoint(ctx: RouteContext, id: string): RouteResult {
  const endpoint = findEndpoint(ctx, id);
  const { enabledEvents } = validateEndpointBody(ctx.body, 'update');
  const { url, description, status } = ctx.body;
  if (typeof url === 'string' && url !== endpoint.url) {
    if (ctx.data.endpoints.some((e) => e.account === ctx.account && e.url === url)) {
      throw urlTaken(url);
    }
    endpoint.url = url;
  }
  if (enabledEvents) endpoint.enabledEvents = enabledEvents;
  if (description !== undefined) endpoint.description = (description as string | null) ?? null;
  if (status === 'enabled' || status === 'disabled') {
    // Re-enabling starts the failure count afresh, or one more failure would disable it again.
    if (status === 'enabled' && endpoint.status !== 'enabled') endpoint.consecutiveFailures = 0;
    endpoint.status = status;
  }
  endpoint.updatedAt = new Date(ctx.now).toISOString();
  return { status: 200, body: endpointJson(endpoint) };
}

export function deleteEndpoint(ctx: RouteContext, id: string): RouteResult {
  const endpoint = findEndpoint(ctx, id);
  ctx.data.endpoints = ctx.data.endpoints.filter((e) => e !== endpoint);
  ctx.cancelDeliveries(endpoint.id);
  return { status: 200, body: { id: endpoint.id, object: 'webhook_endpoint', deleted: true } };
}

/** Creates an event in the caller's account (not yet delivered). */
export function createEvent(ctx: RouteContext, type: string, data: Record<string, unknown>): EventRecordStored {
  const event: EventRecordStored = {
    id: newEventId(),
    seq: ctx.data.nextEventSeq++,
    account: ctx.account,
    type,
    apiVersion: ctx.apiVersion,
    created: Math.floor(ctx.now / 1000),
    data,
    synthetic: type === PING_EVENT_TYPE,
    delivery_attempts: [],
  };
  ctx.data.events.push(event);
  dropOldestEvents(ctx.data, ctx.maxEvents);
  return event;
}

/** Endpoints of the account that are enabled and subscribed to `type` now (contract: Endpoints, rule 3). */
export function subscribedEndpoints(ctx: RouteContext, type: string): EndpointRecord[] {
  return ctx.data.endpoints.filter(
    (e) => e.account === ctx.account && e.status === 'enabled' && matchesSubscription(type, e.enabledEvents),
  );
}

export function pingEndpoint(ctx: RouteContext, id: string): RouteResult {
  const endpoint = findEndpoint(ctx, id);
  // DESIGN.md: ping data is the endpoint without its secret; a disabled endpoint is pinged too.
  const event = createEvent(ctx, PING_EVENT_TYPE, endpointJson(endpoint) as unknown as Record<string, unknown>);
  ctx.deliver(event, [endpoint]);
  return {
    status: 202,
    body: {
      eventId: event.id,
      endpointId: endpoint.id,
      object: 'webhook_endpoint_ping',
      message: `Ping queued for webhook endpoint ${endpoint.id}.`,
    },
  };
}

export function listEvents(ctx: RouteContext): RouteResult {
  const type = ctx.query.get('type');
  if (type !== null && !isKnownEventType(type))
    throw invalidParam('type', `type ${JSON.stringify(type)} is not an event type`);
  const mine = ctx.data.events.filter((e) => e.account === ctx.account && (type === null || e.type === type));
  return page(mine, (e) => e.seq, ctx.query, eventJson);
}

export function getEvent(ctx: RouteContext, id: string): RouteResult {
  return { status: 200, body: eventJson(findEvent(ctx, id)) };
}

export function redeliverEvent(ctx: RouteContext, id: string): RouteResult {
  const event = findEvent(ctx, id);
  if (event.synthetic) {
    throw new SandboxError(
      400,
      'invalid_request_error',
      'cannot_redeliver_synthetic_event',
      'A ping event cannot be redelivered. Send a new ping to the endpoint instead.',
    );
  }
  const endpoints = subscribedEndpoints(ctx, event.type);
  ctx.deliver(event, endpoints);
  return {
    status: 202,
    body: {
      eventId: event.id,
      endpointsNotified: endpoints.length,
      object: 'webhook_event_redelivery',
      message: `Redelivery of ${event.id} queued for ${counted(endpoints.length, 'endpoint')}.`,
    },
  };
}
