import type { AppStateEvent } from '../listener/index.js';
import type { ApiClient, MissedEvent } from '../api/index.js';
import type { ErrorBody, WebhookEndpoint } from '../contract/index.js';
import type { Listener } from '../listener/index.js';
import type { Capture, CaptureStore } from '../store/index.js';
import { endpointProblem, type EventStory, missedWords, type OutlookWords, storyKey } from '../story/index.js';

/** Everything the hub acts on. The API key stays inside `client`; the secret never enters here. */
export interface ActionContext {
  store: CaptureStore;
  listener: Listener;
  /** null offline: ping, redeliver and attempts then explain there is no API. */
  client: ApiClient | null;
  mode: 'sandbox' | 'api' | 'offline';
  forwardTo: string | null;
  /** `--trace-url`: where the page links a delivery's trace, `{traceId}` in it. */
  traceUrl?: string;
  /** `whsec_…abcd`, or null. */
  secretHint: string | null;
  getEndpoint(): WebhookEndpoint | null;
  /** Re-reads the endpoint from the API (status changes); resolves to the new record. */
  refreshEndpoint?(): Promise<WebhookEndpoint | null>;
  /** Records a new endpoint state (after enable-endpoint). */
  setEndpoint(endpoint: WebhookEndpoint): void;
  /** What the API's retry delays are multiplied by: a sandbox's --time-scale. @default 1 */
  timeScale?: number;
  /** The events that came while listen was off and did not reach its endpoint (see listen's catch-up). */
  getMissed?(): MissedEvent[];
  /**
   * Redelivers them now; without `yes`, resolves with the other endpoints a redelivery would reach
   * instead of going on (the page asks first).
   */
  catchUp?(
    yes: boolean,
  ): Promise<{ needsConfirm: { id: number; url: string }[]; reach: string } | { redelivered: string[] }>;
}

export type InspectorMessage =
  | {
      type: 'snapshot';
      captures: Capture[];
      hasMore: boolean;
      endpoint: PublicEndpoint | null;
      mode: ActionContext['mode'];
      forwardTo: string | null;
      /** `--trace-url`: where the page links a delivery's trace, `{traceId}` in it. */
      traceUrl?: string;
      listener: string;
      resync?: boolean;
      missed: MissedForPage[];
      /** The story of each event the captures belong to (src/story/): the page renders it, deciding nothing. */
      stories: EventStory[];
    }
  | { type: 'capture'; capture: Capture; story: EventStory }
  | { type: 'history'; captures: Capture[]; hasMore: boolean; stories: EventStory[] }
  | { type: 'endpoint'; endpoint: PublicEndpoint | null }
  | { type: 'missed'; missed: MissedForPage[] }
  /** Every BEAT_MS: listen is answering (see ui/connection.js). */
  | { type: 'beat' }
  /** The app is not answering, and deliveries wait for it; or it is back (see AppWait). */
  | ({ type: 'app' } & AppStateEvent)
  | { type: 'result'; id: unknown; ok: true; data: unknown }
  | { type: 'result'; id: unknown; ok: false; error: ErrorBody };

/** A missed event as the page gets it: with what the service does next in the story's words. */
export type MissedForPage = MissedEvent & { words: OutlookWords };

export const missedForPage = (missed: readonly MissedEvent[]): MissedForPage[] =>
  missed.map((m) => ({ ...m, words: missedWords(m.outlook) }));

/** The endpoint as the page gets it: no secret, and why it gets nothing when it is not enabled (the banner). */
export type PublicEndpoint = Omit<WebhookEndpoint, 'secret'> & { secretHint: string | null; problem: string | null };

export const SNAPSHOT_SIZE = 200;

/** The endpoint as the page may see it: never the secret, at most its masked hint. */
export function publicEndpoint(
  endpoint: WebhookEndpoint | null,
  secretHint: string | null = null,
): PublicEndpoint | null {
  if (!endpoint) return null;
  const { secret: _never, ...rest } = endpoint;
  return { ...rest, secretHint, problem: endpointProblem(endpoint) };
}

/**
 * How many of an event's newest captures a message's story tells besides its own (see StoryBook.storiesOf): a
 * page that missed a message (a resync, a reload) still has the last few of an event told whole. Few, and a
 * fixed number: a message costs the same whatever the event holds (16 cost one event id repeated a fifth of
 * the listener's throughput; docs/performance-notes.md).
 */
export const RECENT_DELIVERIES = 4;

/**
 * The texts of the capture messages of one flush, as JSON.stringify would make them: each with the capture's
 * text as the journal wrote it (`json`, given the capture and its index) and its event's story telling what it
 * was and what the event's newest RECENT_DELIVERIES were. Each event's story is serialized once a flush: a burst
 * of one event id (a flush of a hundred of its captures) costs each message the same, not the whole burst's
 * deliveries each.
 */
export function captureTexts(
  captures: readonly Capture[],
  stories: ReadonlyMap<string, EventStory>,
  json: (capture: Capture, index: number) => string,
): string[] {
  const told = new Map<string, { head: string; deliveries: EventStory['deliveries']; newest: string[] }>();
  return captures.map((capture, index) => {
    const key = storyKey(capture);
    let event = told.get(key);
    if (!event) {
      const { deliveries, ...story } = stories.get(key) as EventStory;
      const newest = Object.keys(deliveries).sort().slice(-RECENT_DELIVERIES);
      event = { head: JSON.stringify(story).slice(0, -1), deliveries, newest };
      told.set(key, event);
    }
    // A dictionary from the start, as the story's own (see tellStory).
    const deliveries: EventStory['deliveries'] = Object.create(null);
    for (const id of [...event.newest, capture.id]) deliveries[id] = event.deliveries[id];
    return `{"type":"capture","capture":${json(capture, index)},"story":${event.head},"deliveries":${JSON.stringify(deliveries)}}}`;
  });
}

/** The stories of the events of `captures` as the listener keeps them, with what each of those captures was. */
export function storiesFor(ctx: Pick<ActionContext, 'listener'>, captures: readonly Capture[]): EventStory[] {
  return [...ctx.listener.stories.storiesOf(captures, { recent: RECENT_DELIVERIES }).values()];
}

/** How often pages are told listen is answering; a page says "not answering" after STALE_AFTER_MS (ui) without one. */
export const BEAT_MS = 2_000;

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
    ...(ctx.traceUrl ? { traceUrl: ctx.traceUrl } : {}),
    missed: missedForPage(ctx.getMissed?.() ?? []),
    stories: storiesFor(ctx, captures),
  };
}
