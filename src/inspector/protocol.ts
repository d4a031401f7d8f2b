import { type ApiClient, ApiError, readDeliveryOutlook } from '../api/index.js';
import type { ErrorBody, WebhookEndpoint } from '../contract/index.js';
import { ActionError } from '../errors.js';
import type { Listener } from '../listener/index.js';
import { type Capture, type CaptureStore, encodeBody } from '../store/index.js';
import { searchCaptures } from './search.js';

/** Everything the hub acts on. The API key stays inside `client`; the secret never enters here. */
export interface ActionContext {
  store: CaptureStore;
  listener: Listener;
  /** null offline: ping, redeliver and attempts then explain there is no API. */
  client: ApiClient | null;
  mode: 'sandbox' | 'api' | 'offline';
  forwardTo: string | null;
  /** `whsec_…abcd`, or null. */
  secretHint: string | null;
  getEndpoint(): WebhookEndpoint | null;
  /** Re-reads the endpoint from the API (status changes); resolves to the new record. */
  refreshEndpoint?(): Promise<WebhookEndpoint | null>;
  /** Records a new endpoint state (after enable-endpoint). */
  setEndpoint(endpoint: WebhookEndpoint): void;
  /** What the API's retry delays are multiplied by: a sandbox's --time-scale. @default 1 */
  timeScale?: number;
}

export type InspectorMessage =
  | {
      type: 'snapshot';
      captures: Capture[];
      hasMore: boolean;
      endpoint: PublicEndpoint | null;
      mode: ActionContext['mode'];
      forwardTo: string | null;
      listener: string;
      resync?: boolean;
    }
  | { type: 'capture'; capture: Capture }
  | { type: 'history'; captures: Capture[]; hasMore: boolean }
  | { type: 'endpoint'; endpoint: PublicEndpoint | null }
  | { type: 'result'; id: unknown; ok: true; data: unknown }
  | { type: 'result'; id: unknown; ok: false; error: ErrorBody };

export type PublicEndpoint = Omit<WebhookEndpoint, 'secret'> & { secretHint: string | null };

export const SNAPSHOT_SIZE = 200;

/** The endpoint as the page may see it: never the secret, at most its masked hint. */
export function publicEndpoint(
  endpoint: WebhookEndpoint | null,
  secretHint: string | null = null,
): PublicEndpoint | null {
  if (!endpoint) return null;
  const { secret: _never, ...rest } = endpoint;
  return { ...rest, secretHint };
}

export function snapshotMessage(ctx: ActionContext): Extract<InspectorMessage, { type: 'snapshot' }> {
  const captures = ctx.store.newest(SNAPSHOT_SIZE);
  return {
    type: 'snapshot',
    captures,
    hasMore: ctx.store.all().length > captures.length,
    endpoint: publicEndpoint(ctx.getEndpoint(), ctx.secretHint),
    mode: ctx.mode,
    forwardTo: ctx.forwardTo,
    listener: ctx.listener.url,
  };
}

function requireApi(ctx: ActionContext): ApiClient {
  if (!ctx.client)
    throw new ActionError('no_api', 'clockhook runs offline (no API key, no sandbox): this needs the API.');
  return ctx.client;
}

function requireEndpoint(ctx: ActionContext): WebhookEndpoint {
  const endpoint = ctx.getEndpoint();
  if (!endpoint)
    throw new ActionError(
      'no_endpoint',
      'No endpoint is registered for this listener (pass --public-url or --endpoint).',
    );
  return endpoint;
}

function requireString(message: Record<string, unknown>, field: string): string {
  const value = message[field];
  if (typeof value !== 'string' || value === '')
    throw new ActionError('parameter_invalid', `${field} must be a non-empty string.`);
  return value;
}

type Broadcast = (message: InspectorMessage) => void;

async function run(
  type: string,
  message: Record<string, unknown>,
  ctx: ActionContext,
  broadcast: Broadcast,
): Promise<unknown> {
  switch (type) {
    case 'replay': {
      const mode =
        message.mode === 'asis' ? 'asis' : message.mode === 'resign' || message.mode === undefined ? 'resign' : null;
      if (!mode) throw new ActionError('parameter_invalid', 'mode must be resign or asis.');
      if (message.body !== undefined && typeof message.body !== 'string')
        throw new ActionError('parameter_invalid', 'body must be a string.');
      return ctx.listener.replay({
        captureId: requireString(message, 'captureId'),
        mode,
        body: message.body as string | undefined,
      });
    }
    case 'ping':
      return requireApi(ctx).pingEndpoint(requireEndpoint(ctx).id);
    case 'redeliver':
      return requireApi(ctx).redeliverEvent(requireString(message, 'eventId'));
    case 'attempts': {
      // With what comes next for each endpoint that failed it (when the service tries again, or that it will not).
      const client = requireApi(ctx);
      const event = await client.getEvent(requireString(message, 'eventId'));
      return { ...event, outlook: await readDeliveryOutlook(client, event, ctx.timeScale) };
    }
    case 'enable-endpoint': {
      const endpoint = await requireApi(ctx).updateEndpoint(requireEndpoint(ctx).id, { status: 'enabled' });
      ctx.setEndpoint(endpoint);
      broadcast({ type: 'endpoint', endpoint: publicEndpoint(endpoint, ctx.secretHint) });
      return publicEndpoint(endpoint, ctx.secretHint);
    }
    case 'clear': {
      const removed = await ctx.store.clear();
      broadcast(snapshotMessage(ctx));
      return { removed };
    }
    case 'body': {
      // Captures reach pages with at most INLINE_BODY_CHARS of body; the page asks for the rest.
      const capture = ctx.store.get(requireString(message, 'captureId'));
      if (!capture) throw new ActionError('capture_not_found', 'That capture is gone (cleared or rotated out).');
      const bytes = await ctx.store.body(capture).catch((error: Error) => {
        throw new ActionError('body_unavailable', error.message);
      });
      return { captureId: capture.id, ...encodeBody(bytes) };
    }
    case 'search': {
      const query = requireString(message, 'query');
      if (query.trim() === '') throw new ActionError('parameter_invalid', 'query must hold something to search for.');
      return searchCaptures(ctx.store, query);
    }
    case 'pin': {
      const capture = await ctx.store.update(requireString(message, 'captureId'), { pinned: message.pinned !== false });
      if (!capture) throw new ActionError('capture_not_found', 'That capture is gone (cleared or rotated out).');
      return { captureId: capture.id, pinned: capture.pinned };
    }
    default:
      throw new ActionError('unknown_action', `Unknown action ${JSON.stringify(type)}.`);
  }
}

function toErrorBody(error: unknown): ErrorBody {
  if (error instanceof ApiError) {
    const { status: _status, ...body } = error.toJSON();
    return body;
  }
  if (error instanceof ActionError) return { type: 'invalid_request_error', code: error.code, message: error.message };
  return { type: 'api_error', code: 'internal_error', message: error instanceof Error ? error.message : String(error) };
}

/**
 * Handles one message from a page: a flat action object with a client `id`. Answers with a
 * `result` (or `history`); never throws for bad input.
 */
export async function handleAction(
  text: string,
  ctx: ActionContext,
  broadcast: Broadcast,
): Promise<InspectorMessage | null> {
  let message: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not an object');
    message = parsed as Record<string, unknown>;
  } catch {
    return {
      type: 'result',
      id: null,
      ok: false,
      error: {
        type: 'invalid_request_error',
        code: 'parameter_invalid',
        message: 'Messages are JSON objects with a type.',
      },
    };
  }
  const type = String(message.type);
  if (type === 'history') {
    const before = typeof message.before === 'string' ? message.before : undefined;
    const captures = ctx.store.newest(SNAPSHOT_SIZE, before);
    const oldest = captures.at(-1);
    return { type: 'history', captures, hasMore: oldest !== undefined && ctx.store.newest(1, oldest.id).length > 0 };
  }
  try {
    return { type: 'result', id: message.id ?? null, ok: true, data: await run(type, message, ctx, broadcast) };
  } catch (error) {
    return { type: 'result', id: message.id ?? null, ok: false, error: toErrorBody(error) };
  }
}
