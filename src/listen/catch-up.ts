import { type ApiClient, deliveryOutlook, type MissedEvent } from '../api/index.js';
import { type EventRecord, matchesSubscription, PING_EVENT_TYPE, type WebhookEndpoint } from '../contract/index.js';
import { resolve } from 'node:path';
import { type Capture, readCaptureStore } from '../store/index.js';
import { counted } from '../counted.js';
import { isTaken } from '../contract/index.js';
import { folderFiles, readListenDiscovery } from '../folder/index.js';

/** How far back catch-up looks at most (hookdeck-cli #14: a laptop closed overnight). */
const LOOK_BACK_MS = 24 * 3_600_000;

const failed = (statusCode: number | null) => !isTaken(statusCode);

/**
 * The missed event an event is for this endpoint, or null when it reached it (or was never for it, or
 * came while this listen runs: `startedAt`). Created in the second listen started, an event counts by its
 * attempts: one that failed before the start was missed, whatever the second.
 */
function missedOf(
  event: EventRecord,
  endpoint: WebhookEndpoint,
  { timeScale, startedAt }: { timeScale: number; startedAt: number },
): MissedEvent | null {
  if (event.type === PING_EVENT_TYPE || !matchesSubscription(event.type, endpoint.enabledEvents)) return null;
  const attempts = event.delivery_attempts.filter((a) => a.endpointId === endpoint.id);
  const base = { eventId: event.id, type: event.type, created: Number(event.created) };
  const disabled = endpoint.status === 'disabled';
  // Created while this listen runs: its first attempt may be on its way right now.
  const sameSecond = Number(event.created) * 1000 >= Math.floor(startedAt / 1000) * 1000;
  const before = attempts.filter((a) => !(Date.parse(a.createdAt) >= startedAt));
  // Nothing is on its way to a disabled endpoint, though.
  if (sameSecond && !disabled && (before.length === 0 || before.length < attempts.length)) return null;
  if (attempts.length === 0)
    return { ...base, outlook: disabled ? { next: 'none', reason: 'disabled' } : { next: 'attempt', attempt: 1 } };
  if (!failed(attempts[attempts.length - 1].statusCode)) return null;
  const state = endpoint.status === 'disabled' ? 'disabled' : 'enabled';
  const mine = { ...event, delivery_attempts: attempts };
  const [outlook] = deliveryOutlook(mine, { timeScale, endpoints: new Map([[endpoint.id, state]]) });
  if (!outlook) return null;
  const { endpointId: _id, ...rest } = outlook;
  return { ...base, outlook: rest };
}

/**
 * The events that came while listen was off and did not reach `endpoint`: read from the service, newest
 * first, a page at a time, back to the newest event captured before this listen started
 * (`capturedBefore`), or 24 hours at most; those captured since (`captured`) arrived and are left out.
 * The API client waits out the contract's 429s (Retry-After) by itself.
 */
export async function findMissed(options: {
  client: ApiClient;
  endpoint: WebhookEndpoint;
  /** The event ids of every capture held. */
  captured: ReadonlySet<string>;
  /** Those captured before this listen started. @default captured */
  capturedBefore?: ReadonlySet<string>;
  now?: number;
  /** When listen started (ms): an event made since then came while it ran, not while it was off. */
  startedAt?: number;
  timeScale?: number;
}): Promise<MissedEvent[]> {
  const { client, endpoint, captured, now = Date.now(), timeScale = 1 } = options;
  const startedAt = options.startedAt ?? now;
  const missed: MissedEvent[] = [];
  let cursor: string | undefined;
  for (;;) {
    const page = await client.listEvents({ limit: 100, cursor });
    for (const event of page.data) {
      const before = options.capturedBefore ?? captured;
      if (before.has(event.id) || Number(event.created) * 1000 < now - LOOK_BACK_MS) return missed;
      if (captured.has(event.id)) continue;
      const one = missedOf(event, endpoint, { timeScale, startedAt });
      if (one) missed.push(one);
    }
    if (!page.hasMore || !page.nextCursor) return missed;
    cursor = page.nextCursor;
  }
}

/**
 * The missed events of a folder's endpoint, asked from elsewhere than its listen (another terminal, an
 * assistant's tools): against the folder's capture store, read as it is; while a listen runs there, what it
 * captured since it started came while it ran, so the scan goes on past it.
 */
export async function findMissedHere(options: {
  client: ApiClient;
  endpoint: WebhookEndpoint;
  stateDir: string;
  timeScale: number;
}): Promise<MissedEvent[]> {
  const { client, endpoint, stateDir, timeScale } = options;
  const files = folderFiles(stateDir);
  const path = files.captures;
  const store = await readCaptureStore(path);
  const listen = await readListenDiscovery(files.listen);
  const startedAt = listen?.db === resolve(path) ? listen.startedAt : undefined;
  const idsOf = (captures: readonly Capture[]) => new Set(captures.flatMap((c) => (c.envelope ? [c.envelope.id] : [])));
  const captured = idsOf(store.captures);
  const capturedBefore =
    startedAt === undefined ? captured : idsOf(store.captures.filter((c) => Date.parse(c.receivedAt) < startedAt));
  return findMissed({ client, endpoint, captured, capturedBefore, timeScale, startedAt });
}

/** What the confirmation says: how many endpoints each redelivery reaches, and which, this listen's first. */
export function reachText(endpoint: WebhookEndpoint, reached: WebhookEndpoint[], sameForAll: boolean): string {
  const all = [endpoint, ...reached.filter((e) => e.id !== endpoint.id)];
  const names = all.map((e, i) => `#${e.id} ${i === 0 ? `this listen (${e.url})` : e.url}`).join(', ');
  const count = counted(all.length, 'endpoint');
  return `${sameForAll ? 'each redelivery reaches' : 'the redeliveries reach up to'} ${count}: ${names}`;
}

/** The endpoints a redelivery of `type` reaches: every enabled endpoint subscribed to it (contract rule 3). */
export async function redeliveryReach(client: ApiClient, type: string): Promise<WebhookEndpoint[]> {
  const endpoints = (await client.listEndpoints({ limit: Number.POSITIVE_INFINITY })).data;
  return endpoints.filter((e) => e.status === 'enabled' && matchesSubscription(type, e.enabledEvents));
}

/**
 * Redelivers the missed events now, re-enabling a disabled endpoint first. `confirm` is asked when a
 * redelivery would reach other endpoints too (a colleague's, a staging one) and may say no.
 */
export async function catchUp(options: {
  client: ApiClient;
  endpoint: WebhookEndpoint;
  missed: MissedEvent[];
  /** Asked with the other endpoints and the words of `reachText`. */
  confirm: (others: WebhookEndpoint[], reach: string) => Promise<boolean>;
  say: (line: string) => void;
}): Promise<{ redelivered: string[]; reenabled: boolean }> {
  const { client, endpoint, missed, say } = options;
  let reenabled = false;
  if (endpoint.status === 'disabled') {
    await client.updateEndpoint(endpoint.id, { status: 'enabled' });
    reenabled = true;
    say(`Re-enabled endpoint ${endpoint.id}, so that the redeliveries reach it.`);
  }
  const others = new Map<number, WebhookEndpoint>();
  const reaches = new Set<string>();
  for (const type of new Set(missed.map((m) => m.type))) {
    const reached = (await redeliveryReach(client, type)).filter((other) => other.id !== endpoint.id);
    for (const other of reached) others.set(other.id, other);
    reaches.add(reached.map((other) => other.id).join());
  }
  const reach = reachText(endpoint, [...others.values()], reaches.size === 1);
  if (others.size > 0 && !(await options.confirm([...others.values()], reach))) return { redelivered: [], reenabled };
  const redelivered: string[] = [];
  for (const { eventId } of missed) {
    const ack = await client.redeliverEvent(eventId);
    redelivered.push(eventId);
    say(`Redelivered ${eventId} to ${counted(ack.endpointsNotified, 'endpoint')}.`);
  }
  return { redelivered, reenabled };
}
