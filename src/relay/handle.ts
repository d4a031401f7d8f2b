import type { DeliveryTrace, DeliveryTracer } from '../listener/tracing.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { WebSocket } from 'ws';
import { type BodyRead, type ByteBudget, leaseFrom, answerEarly, readBody, withoutHopByHop } from '../http/index.js';
import { sendInTurn } from '../http/index.js';
import { formatMiB } from '../size.js';
import type { RelayBus, RemoteOutcome, RemoteRequest } from './bus.js';
import type { Channel, Channels, Pending } from './channels.js';
import type { KeyGate } from './gate.js';
import { type RefusalCause, requestOutcomeOf, type RelayMetrics } from './metrics.js';
import { encodeFrame } from './protocol.js';

export interface RelayRequestLog {
  event: 'request';
  channel: string;
  method: string;
  /** Path under the channel, without the query (which may hold secrets). */
  path: string;
  status: number;
  durationMs: number;
}

type HeaderMap = Record<string, string | string[]>;

/** Hop-by-hop headers never cross the relay; content-length is set anew for the bytes relayed. */
function headersWithout(headers: IncomingMessage['headers'] | HeaderMap): HeaderMap {
  const { 'content-length': _length, ...rest } = withoutHopByHop(headers);
  return rest;
}

/** What a request to the relay needs of it. */
export interface RelayContext {
  channels: Channels;
  /** Bytes of request bodies held now, all channels together (see maxBuffered). */
  budget: ByteBudget;
  maxBody: number;
  maxChannels: number;
  maxInFlight: number;
  maxInFlightPerKey: number;
  timeoutMs: number;
  retryAfter: string;
  onRequest: (log: RelayRequestLog) => void;
  /** Shared state with the other instances, when the relay runs on Redis. */
  bus: RelayBus | null;
  gate: KeyGate;
  metrics: RelayMetrics;
  /** Requests being answered by this instance now. */
  inFlight: { count: number };
  /** Renews this instance's claims on Redis now (set once its timers run). */
  renew?: () => Promise<void>;
  /** Spans of each relayed request (`relay --otlp`); null: tracing off, and nothing is added to what is relayed. */
  tracer: DeliveryTracer | null;
}

/** The request as it travels to the listener: method, path under the channel, headers to pass on. */
function outgoing(
  req: IncomingMessage,
  path: string,
  trace: DeliveryTrace | null,
): Omit<RemoteRequest, 'channel' | 'body'> {
  // With tracing on, the listener's span becomes a child of the relay's (one trace covers both).
  const headers = Object.assign(headersWithout(req.headers), trace?.propagate());
  const forwardedFor = [req.headers['x-forwarded-for'], req.socket.remoteAddress].filter(Boolean).join(', ');
  if (forwardedFor) headers['x-forwarded-for'] = forwardedFor;
  return { method: req.method ?? 'GET', path, headers };
}

/**
 * Sends one request over the channel's WebSocket (on this instance) and waits for the outcome: the
 * listener's answer, or why there is none.
 */
function exchange(
  relay: RelayContext,
  channel: Channel,
  socket: WebSocket,
  request: Omit<RemoteRequest, 'channel' | 'body'>,
  body: Buffer[],
): Promise<RemoteOutcome> {
  if (!relay.channels.startRequest(channel.keyId)) return Promise.resolve({ kind: 'key-full' });
  const pending: Pending = { resolve: () => {} };
  const requestId = channel.pending.add(pending);
  if (requestId === undefined) {
    relay.channels.endRequest(channel.keyId);
    return Promise.resolve({ kind: 'full' });
  }
  relay.gate.count(channel.keyId);
  return new Promise((resolve) => {
    const finish = (outcome: RemoteOutcome) => {
      clearTimeout(timer);
      channel.pending.delete(requestId);
      relay.channels.endRequest(channel.keyId);
      resolve(outcome);
    };
    const timer = setTimeout(() => finish({ kind: 'timeout' }), relay.timeoutMs);
    pending.resolve = (frame) =>
      finish(
        frame ? { kind: 'answered', status: frame.status, headers: frame.headers, body: frame.body } : { kind: 'gone' },
      );
    sendInTurn(socket, encodeFrame({ type: 'request', id: requestId, ...request, body }, channel.binary));
  });
}

/**
 * A request another instance received for a channel whose listener is connected here: relayed like one
 * received here, its body counted against this channel's budget while it is in flight.
 */
export async function handleRemote(relay: RelayContext, request: RemoteRequest): Promise<RemoteOutcome> {
  const channel = relay.channels.get(request.channel);
  if (!channel?.socket) return { kind: 'gone' };
  const lease = leaseFrom(relay.budget, channel.budget);
  try {
    if (!lease.take(request.body.length)) return { kind: 'busy' };
    const { channel: _id, body, ...rest } = request;
    return await exchange(relay, channel, channel.socket, rest, [body]);
  } finally {
    lease.giveBack();
  }
}

/** An answer the relay makes itself, in the contract's error envelope. */
interface Refusal {
  status: number;
  code: string;
  message: string;
  headers?: Record<string, string>;
  /** Counted in the refusals metric, for a limit of the relay's. */
  cause?: RefusalCause;
}

function tooLarge(relay: RelayContext): Refusal {
  return {
    status: 413,
    code: 'payload_too_large',
    message: `The body is over ${relay.maxBody} bytes, the relay's limit.`,
  };
}

/** Why a body that was read is not relayed: over the size or the budget; null when it goes. */
function refusalOf(relay: RelayContext, read: BodyRead): Refusal | null {
  if (read === 'busy') {
    const message = `The relay holds as many request bodies as it may (${formatMiB(relay.budget.limit)} in all, a quarter per channel); retry later.`;
    return { status: 503, code: 'relay_busy', message, headers: { 'retry-after': relay.retryAfter }, cause: 'buffer' };
  }
  return read.truncated ? tooLarge(relay) : null;
}

/** What the sender gets when the exchange with the listener did not bring an answer. */
function failedExchange(relay: RelayContext, outcome: Exclude<RemoteOutcome['kind'], 'answered'>): Refusal {
  const retry = { 'retry-after': relay.retryAfter };
  switch (outcome) {
    case 'full':
      return {
        status: 429,
        code: 'too_many_requests',
        message: `More than ${relay.maxInFlight} requests in flight on this channel.`,
        headers: { 'retry-after': '1' },
        cause: 'in-flight',
      };
    case 'key-full':
      return {
        status: 429,
        code: 'too_many_requests',
        message: `The listeners of this channel's access key have ${relay.maxInFlightPerKey} requests in flight already.`,
        headers: { 'retry-after': '1' },
        cause: 'in-flight',
      };
    case 'timeout':
      return {
        status: 504,
        code: 'listener_timeout',
        message: `The listener did not answer within ${relay.timeoutMs / 1000} s.`,
      };
    case 'busy':
      return refusalOf(relay, 'busy') as Refusal;
    case 'unreachable':
      return unavailable(relay);
    default:
      return {
        status: 503,
        code: 'listener_unavailable',
        message: 'The listener went away before it answered; retry later.',
        headers: retry,
      };
  }
}

function unavailable(relay: RelayContext): Refusal {
  const message = 'The relay cannot reach the state it shares with its other instances; retry later.';
  return {
    status: 503,
    code: 'relay_unavailable',
    message,
    headers: { 'retry-after': relay.retryAfter },
    cause: 'redis',
  };
}

function notConnected(relay: RelayContext): Refusal {
  // The service retries on its own schedule; the listener may be back by then.
  const message = 'The listener of this channel is not connected; retry later.';
  return { status: 503, code: 'listener_unavailable', message, headers: { 'retry-after': relay.retryAfter } };
}

const NOT_FOUND: Refusal = {
  status: 404,
  code: 'channel_not_found',
  message: 'No listener has connected to this channel lately.',
};

/**
 * Where a request for channel `id` goes: a listener here, one on another instance, or a refusal.
 * `fresh`: ask Redis, not the holder remembered from the last request.
 */
async function routeOf(
  relay: RelayContext,
  id: string,
  fresh = false,
): Promise<Channel | { holder: string } | Refusal> {
  const channel = relay.channels.get(id);
  if (relay.bus && !relay.bus.up) return unavailable(relay);
  if (channel?.socket) return channel;
  if (!relay.bus) return channel ? notConnected(relay) : NOT_FOUND;
  if (!/^[A-Za-z0-9_-]{32}$/.test(id)) return NOT_FOUND;
  const found = await relay.bus.holderOf(id, fresh).catch(() => null);
  if (!found) return unavailable(relay);
  if (found.holder && found.holder !== relay.bus.id) return { holder: found.holder };
  return found.seen || channel ? notConnected(relay) : NOT_FOUND;
}

/** The health check: with Redis, whether it is reachable (503 when not, so a balancer can tell). */
function health(relay: RelayContext, res: ServerResponse): void {
  const redis = relay.bus ? (relay.bus.up ? 'up' : 'down') : undefined;
  const ok = redis !== 'down';
  const body = JSON.stringify({ ok, channels: relay.channels.connected, ...(redis ? { redis } : {}) });
  res.writeHead(ok ? 200 : 503, { 'content-type': 'application/json' }).end(body);
}

async function metrics(relay: RelayContext, res: ServerResponse): Promise<void> {
  const text = await relay.metrics.registry.metrics();
  res.writeHead(200, { 'content-type': relay.metrics.registry.contentType }).end(text);
}

/** An HTTP request to the relay: health, metrics, or a delivery to `/c/<channel>/…` for its listener. */
export async function handle(relay: RelayContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://relay');
  if (url.pathname === '/healthz') return health(relay, res);
  if (url.pathname === '/metrics') return metrics(relay, res);
  const match = /^\/c\/([^/]+)(\/.*)?$/.exec(url.pathname);
  if (!match) {
    const message = 'Deliveries go to /c/<channel>/…; see the public URL clockhook listen --relay printed.';
    answerEarly(req, res, 404, 'not_found', message);
    return;
  }
  const [, id, rest = '/'] = match;
  const started = performance.now();
  relay.inFlight.count += 1;
  const trace = relay.tracer?.start(req.headers, { method: req.method ?? 'POST', path: '/c/{channel}' }) ?? null;
  const answer = (status: number, refusal?: Refusal) => {
    trace?.end(status, { 'clockhook.relay.channel': id, ...(refusal ? { 'error.type': refusal.code } : {}) });
    if (refusal) answerEarly(req, res, status, refusal.code, refusal.message, { headers: refusal.headers });
    const durationMs = performance.now() - started;
    relay.metrics.requests.labels(requestOutcomeOf(status, !refusal)).inc();
    if (refusal?.cause) relay.metrics.refusals.labels(refusal.cause).inc();
    relay.metrics.answerSeconds.observe(durationMs / 1000);
    relay.onRequest({
      event: 'request',
      channel: id,
      method: req.method ?? '',
      path: rest,
      status,
      durationMs: Math.round(durationMs),
    });
  };
  try {
    await relayRequest(relay, req, res, { id, path: rest + url.search, trace }, answer);
  } finally {
    relay.inFlight.count -= 1;
  }
}

/**
 * Sends a request to its listener, here or on the instance that holds it. When the holder remembered
 * from the last request has let the channel go (taken over elsewhere), Redis is asked once more.
 */
async function relayTo(
  relay: RelayContext,
  route: Channel | { holder: string },
  request: Omit<RemoteRequest, 'body'>,
  body: Buffer[],
  retried = false,
): Promise<RemoteOutcome> {
  if ('socket' in route) return route.socket ? exchange(relay, route, route.socket, request, body) : { kind: 'gone' };
  if (!relay.bus) return { kind: 'gone' };
  const outcome = await relay.bus.exchange(route.holder, request, body, relay.timeoutMs + 1000);
  if (outcome.kind !== 'gone' || retried) return outcome;
  const again = await routeOf(relay, request.channel, true);
  if ('status' in again || ('holder' in again && again.holder === route.holder)) return outcome;
  return relayTo(relay, again, request, body, true);
}

/** A delivery to channel `id`: routed, its body read under the limits, relayed, and answered. */
async function relayRequest(
  relay: RelayContext,
  req: IncomingMessage,
  res: ServerResponse,
  { id, path, trace }: { id: string; path: string; trace: DeliveryTrace | null },
  answer: (status: number, refusal?: Refusal) => void,
): Promise<void> {
  const route = await routeOf(relay, id);
  if ('status' in route) return answer(route.status, route);
  if (Number(req.headers['content-length']) > relay.maxBody) return answer(413, tooLarge(relay));
  const local = 'socket' in route ? route : null;
  // Every byte of the body counts against the relay's budget until the sender has its answer, or
  // until the body is refused and its bytes dropped.
  const lease = local ? leaseFrom(relay.budget, local.budget) : leaseFrom(relay.budget);
  try {
    const read = await readBody(req, { limit: relay.maxBody, lease, excess: 'stop' });
    const refusal = refusalOf(relay, read);
    if (refusal || read === 'busy') return answer(refusal?.status ?? 503, refusal ?? undefined);
    const request = outgoing(req, path, trace);
    const outcome = await relayTo(relay, route, Object.assign(request, { channel: id }), read.chunks);
    if (outcome.kind !== 'answered') {
      const failed = failedExchange(relay, outcome.kind);
      return answer(failed.status, failed);
    }
    const headers = Object.assign(headersWithout(outcome.headers), { 'content-length': String(outcome.body.length) });
    res.writeHead(outcome.status, headers);
    res.end(outcome.body);
    answer(outcome.status);
  } finally {
    lease.giveBack();
  }
}
