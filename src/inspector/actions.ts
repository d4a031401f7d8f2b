import { type ApiClient, ApiError, readDeliveryOutlook } from '../api/index.js';
import { type ErrorBody, isTaken, type WebhookEndpoint } from '../contract/index.js';
import { outlookWords } from '../story/index.js';
import { ActionError } from '../errors.js';
import { type Capture, encodeBody } from '../store/index.js';
import {
  type ActionContext,
  type InspectorMessage,
  publicEndpoint,
  SNAPSHOT_SIZE,
  snapshotMessage,
  storiesFor,
} from './protocol.js';
import { searchCaptures } from './search.js';
import { harOf } from '../captures/har.js';
import { scenarioOf } from '../captures/scenario.js';
import { packageVersion } from '../version.js';

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
type Action = (message: Record<string, unknown>, ctx: ActionContext, broadcast: Broadcast) => Promise<unknown>;

const gone = () => new ActionError('capture_not_found', 'That capture is gone (cleared or rotated out).');

/** A capture's whole body, or the action's error saying why it cannot be read. */
const bodyOf = (ctx: ActionContext, capture: Capture): Promise<Buffer> =>
  ctx.store.body(capture).catch((error: Error) => {
    throw new ActionError('body_unavailable', error.message);
  });

/** The page's actions, by message type. */
const ACTIONS: Record<string, Action> = {
  async replay(message, ctx) {
    const mode =
      message.mode === 'asis' ? 'asis' : message.mode === 'resign' || message.mode === undefined ? 'resign' : null;
    if (!mode) throw new ActionError('parameter_invalid', 'mode must be resign or asis.');
    if (message.body !== undefined && typeof message.body !== 'string')
      throw new ActionError('parameter_invalid', 'body must be a string.');
    const body = message.body as string | undefined;
    return ctx.listener.replay({ captureId: requireString(message, 'captureId'), mode, body });
  },
  ping: async (_message, ctx) => requireApi(ctx).pingEndpoint(requireEndpoint(ctx).id),
  redeliver: async (message, ctx) => requireApi(ctx).redeliverEvent(requireString(message, 'eventId')),
  async attempts(message, ctx) {
    // With what comes next for each endpoint that failed it (when the service tries again, or that it will not).
    const client = requireApi(ctx);
    const event = await client.getEvent(requireString(message, 'eventId'));
    const outlook = await readDeliveryOutlook(client, event, ctx.timeScale);
    // In the story's words (the page puts the time in), and each attempt's answer judged once.
    return {
      ...event,
      delivery_attempts: event.delivery_attempts.map((a) => ({ ...a, taken: isTaken(a.statusCode) })),
      outlook: outlook.map((o) => ({ ...o, words: outlookWords(o, { timeScale: ctx.timeScale }) })),
    };
  },
  async 'enable-endpoint'(_message, ctx, broadcast) {
    const endpoint = await requireApi(ctx).updateEndpoint(requireEndpoint(ctx).id, { status: 'enabled' });
    ctx.setEndpoint(endpoint);
    broadcast({ type: 'endpoint', endpoint: publicEndpoint(endpoint, ctx.secretHint) });
    return publicEndpoint(endpoint, ctx.secretHint);
  },
  async clear(_message, ctx, broadcast) {
    const removed = await ctx.store.clear();
    broadcast(snapshotMessage(ctx));
    return { removed };
  },
  async body(message, ctx) {
    // Captures reach pages with at most INLINE_BODY_CHARS of body; the page asks for the rest.
    const capture = ctx.store.get(requireString(message, 'captureId'));
    if (!capture) throw gone();
    return { captureId: capture.id, ...encodeBody(await bodyOf(ctx, capture)) };
  },
  async har(message, ctx) {
    // What `clockhook captures export --format har` writes for this capture.
    const capture = ctx.store.get(requireString(message, 'captureId'));
    if (!capture) throw gone();
    const body = await bodyOf(ctx, capture);
    return harOf([{ capture, body }], packageVersion, ctx.listener.stories.storiesOf([capture]));
  },
  async scenario(message, ctx) {
    // What `clockhook captures export --format scenario` writes: the captures named, or every one of an event.
    const ids = message.captureIds;
    const eventId = typeof message.eventId === 'string' ? message.eventId : null;
    if (!eventId && !(Array.isArray(ids) && ids.length > 0 && ids.every((id) => typeof id === 'string')))
      throw new ActionError('parameter_invalid', 'give captureIds (a list of capture ids) or eventId.');
    const captures = eventId ? ctx.store.ofEvent(eventId) : (ids as string[]).map((id) => ctx.store.get(id));
    if (captures.length === 0 || captures.includes(undefined)) throw gone();
    const chosen = captures as Capture[];
    const withBodies = await Promise.all(
      chosen.map(async (capture) => ({ capture, body: await bodyOf(ctx, capture) })),
    );
    return scenarioOf(withBodies, ctx.listener.stories.storiesOf(chosen));
  },
  async search(message, ctx) {
    const query = requireString(message, 'query');
    if (query.trim() === '') throw new ActionError('parameter_invalid', 'query must hold something to search for.');
    const found = await searchCaptures(ctx.store, query);
    return { ...found, stories: storiesFor(ctx, found.captures) };
  },
  async 'catch-up'(message, ctx) {
    if (!ctx.catchUp)
      throw new ActionError('no_catch_up', 'Nothing to catch up on: listen has no endpoint of an earlier run.');
    return ctx.catchUp(message.yes === true);
  },
  async pin(message, ctx) {
    const capture = await ctx.store.update(requireString(message, 'captureId'), { pinned: message.pinned !== false });
    if (!capture) throw gone();
    return { captureId: capture.id, pinned: capture.pinned };
  },
};

async function run(type: string, message: Record<string, unknown>, ctx: ActionContext, broadcast: Broadcast) {
  const action = Object.hasOwn(ACTIONS, type) ? ACTIONS[type] : undefined;
  if (!action) throw new ActionError('unknown_action', `Unknown action ${JSON.stringify(type)}.`);
  return action(message, ctx, broadcast);
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
    const hasMore = oldest !== undefined && ctx.store.newest(1, oldest.id).length > 0;
    return { type: 'history', captures, hasMore, stories: storiesFor(ctx, captures) };
  }
  try {
    return { type: 'result', id: message.id ?? null, ok: true, data: await run(type, message, ctx, broadcast) };
  } catch (error) {
    return { type: 'result', id: message.id ?? null, ok: false, error: toErrorBody(error) };
  }
}
