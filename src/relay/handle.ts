import type { IncomingMessage, ServerResponse } from 'node:http';
import type { WebSocket } from 'ws';
import { answerError, type BodyRead, type ByteBudget, leaseFrom, readBody, withoutHopByHop } from '../http/index.js';
import { sendInTurn } from '../net.js';
import { formatMiB } from '../size.js';
import type { Channel, Channels, Pending } from './channels.js';
import { encodeFrame, type ResponseFrame } from './protocol.js';

export interface RelayRequestLog {
  event: 'request';
  channel: string;
  method: string;
  /** Path under the channel, without the query (which may hold secrets). */
  path: string;
  status: number;
  durationMs: number;
}

/** Hop-by-hop headers never cross the relay; content-length is set anew for the bytes relayed. */
function headersWithout(
  headers: IncomingMessage['headers'] | Record<string, string | string[]>,
): Record<string, string | string[]> {
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
  timeoutMs: number;
  retryAfter: string;
  onRequest: (log: RelayRequestLog) => void;
}

/**
 * Sends one request over the channel's WebSocket and waits for its answer: the response frame; null
 * when the listener went away first; 'timeout'; or 'full' when the channel has no request slot free.
 */
function exchange(
  channel: Channel,
  socket: WebSocket,
  req: IncomingMessage,
  path: string,
  body: Buffer[],
  timeoutMs: number,
): Promise<ResponseFrame | null | 'timeout' | 'full'> {
  const pending: Pending = { resolve: () => {} };
  const requestId = channel.pending.add(pending);
  if (requestId === undefined) return Promise.resolve('full');
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      channel.pending.delete(requestId);
      resolve('timeout');
    }, timeoutMs);
    pending.resolve = (frame) => {
      clearTimeout(timer);
      channel.pending.delete(requestId);
      resolve(frame);
    };
    const headers = headersWithout(req.headers);
    const forwardedFor = [req.headers['x-forwarded-for'], req.socket.remoteAddress].filter(Boolean).join(', ');
    if (forwardedFor) headers['x-forwarded-for'] = forwardedFor;
    sendInTurn(
      socket,
      encodeFrame({ type: 'request', id: requestId, method: req.method ?? 'GET', path, headers, body }, channel.binary),
    );
  });
}

/** An answer the relay makes itself, in the contract's error envelope. */
interface Refusal {
  status: number;
  code: string;
  message: string;
  headers?: Record<string, string>;
}

/** Why a request whose body was read is not sent to its listener; null when it goes. */
function refusalOf(relay: RelayContext, channel: Channel, read: BodyRead): Refusal | null {
  const retry = { 'retry-after': relay.retryAfter };
  if (read === 'busy') {
    const limits = `${formatMiB(relay.budget.limit)} in all, ${formatMiB(channel.budget.limit)} per channel`;
    const message = `The relay holds as many request bodies as it may (${limits}); retry later.`;
    return { status: 503, code: 'relay_busy', message, headers: { ...retry, connection: 'close' } };
  }
  if (read.truncated) {
    const message = `The body is over ${relay.maxBody} bytes, the relay's limit.`;
    return { status: 413, code: 'payload_too_large', message, headers: { connection: 'close' } };
  }
  // The service retries on its own schedule; the listener may be back by then.
  const message = 'The listener of this channel is not connected; retry later.';
  return channel.socket ? null : { status: 503, code: 'listener_unavailable', message, headers: retry };
}

/** What the sender gets when the exchange with the listener did not bring an answer. */
function failedExchange(relay: RelayContext, outcome: 'full' | 'timeout' | null): Refusal {
  if (outcome === 'full') {
    const message = `More than ${relay.maxInFlight} requests in flight on this channel.`;
    return { status: 429, code: 'too_many_requests', message, headers: { 'retry-after': '1' } };
  }
  if (outcome === 'timeout') {
    const message = `The listener did not answer within ${relay.timeoutMs / 1000} s.`;
    return { status: 504, code: 'listener_timeout', message };
  }
  const message = 'The listener went away before it answered; retry later.';
  return { status: 503, code: 'listener_unavailable', message, headers: { 'retry-after': relay.retryAfter } };
}

/** An HTTP request to the relay: the health check, or a delivery to `/c/<channel>/…` for its listener. */
export async function handle(relay: RelayContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://relay');
  if (url.pathname === '/healthz') {
    const health = JSON.stringify({ ok: true, channels: relay.channels.connected });
    res.writeHead(200, { 'content-type': 'application/json' }).end(health);
    return;
  }
  const match = /^\/c\/([^/]+)(\/.*)?$/.exec(url.pathname);
  if (!match) {
    const message = 'Deliveries go to /c/<channel>/…; see the public URL clockhook listen --relay printed.';
    answerError(res, 404, 'not_found', message);
    return;
  }
  const [, id, rest = '/'] = match;
  const started = performance.now();
  const method = req.method ?? '';
  const answer = (status: number, refusal?: Refusal) => {
    if (refusal) answerError(res, status, refusal.code, refusal.message, { headers: refusal.headers });
    const durationMs = Math.round(performance.now() - started);
    relay.onRequest({ event: 'request', channel: id, method, path: rest, status, durationMs });
  };
  const channel = relay.channels.get(id);
  if (!channel) {
    req.resume();
    const message = 'No listener has connected to this channel since the relay started.';
    answer(404, { status: 404, code: 'channel_not_found', message });
    return;
  }
  // Every byte of the body counts against the relay's budget until the sender has its answer, or
  // until the body is refused and its bytes dropped.
  const lease = leaseFrom(relay.budget, channel.budget);
  try {
    const read = await readBody(req, { limit: relay.maxBody, lease, excess: 'drain' });
    const refusal = refusalOf(relay, channel, read);
    if (refusal || read === 'busy' || !channel.socket) return answer(refusal?.status ?? 503, refusal ?? undefined);
    const response = await exchange(channel, channel.socket, req, rest + url.search, read.chunks, relay.timeoutMs);
    if (response === 'full' || response === 'timeout' || response === null) {
      const failed = failedExchange(relay, response);
      return answer(failed.status, failed);
    }
    res.writeHead(response.status, { ...headersWithout(response.headers), 'content-length': response.body.length });
    res.end(response.body);
    answer(response.status);
  } finally {
    lease.giveBack();
  }
}
