import { readFile } from 'node:fs/promises';
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { type WebSocket, WebSocketServer } from 'ws';
import { type Logger, silentLogger } from '../logger.js';
import {
  CHANNEL_PATTERN,
  CONNECT_PATH,
  channelFor,
  type ControlFrame,
  decodeFrame,
  encodeFrame,
  parseResponseFrame,
  PROTOCOL_HEADER,
  PROTOCOL_VERSION,
  type ResponseFrame,
  TOKEN_PATTERN,
} from './protocol.js';
import { closeNow, isEveryInterface, listenOn, sendInTurn } from '../net.js';
import { formatMiB } from '../size.js';
import {
  answerClientError,
  answerError,
  answerOnSocket,
  ByteBudget,
  hardenedServerOptions,
  leaseFrom,
  readBody,
  withoutHopByHop,
} from '../http/index.js';

export interface RelayRequestLog {
  event: 'request';
  channel: string;
  method: string;
  /** Path under the channel, without the query (which may hold secrets). */
  path: string;
  status: number;
  durationMs: number;
}

export interface RelayServerOptions {
  /** @default 8080 */
  port?: number;
  /** @default '0.0.0.0' */
  host?: string;
  /** The URL senders use (behind a TLS proxy, say). @default the bound address */
  publicUrl?: string;
  /** PEM files to serve HTTPS directly. */
  tlsCert?: string;
  tlsKey?: string;
  /** Largest request body relayed. @default 5 MiB */
  maxBody?: number;
  /**
   * Most bytes of request bodies held at once, being read or in flight, in all; one channel may hold a
   * quarter of it. Beyond: 503 with Retry-After. @default 256 MiB
   */
  maxBuffered?: number;
  /** @default 1000 */
  maxChannels?: number;
  /** Requests in flight per channel. @default 256 */
  maxInFlight?: number;
  /** How long a sender waits for the listener. @default 30000 */
  responseTimeoutMs?: number;
  /** Ping interval; a listener silent for two intervals is dropped. @default 15000 */
  heartbeatMs?: number;
  /** Headers and body must arrive within this (slowloris). @default 60000 */
  requestTimeoutMs?: number;
  /** Retry-After seconds on 503. @default 10 */
  retryAfterSeconds?: number;
  logger?: Logger;
  /** Told about each relayed request (never bodies, tokens or secrets). */
  onRequest?: (log: RelayRequestLog) => void;
}

export interface RelayServer {
  url: string;
  publicUrl: string;
  port: number;
  /** Connected listeners. */
  readonly connected: number;
  close(): Promise<void>;
}

interface Pending {
  resolve(frame: ResponseFrame | null): void;
}

/**
 * The requests in flight on a channel, by id: a fixed array of slots, each id naming its slot
 * (id modulo the size), so a frame finds its request without a hash table. Not a Map: as with the
 * listener's forwards (see PENDING in ../listener/forward.ts), a table of requests made V8 promote
 * every request's objects, which took half of the relay's GC time.
 */
class InFlight<T> {
  readonly #slots: ({ id: number; value: T } | undefined)[];
  /** Free slot numbers (numbers only: nothing here points to a request). */
  readonly #free: number[];
  #round = 0;

  constructor(size: number) {
    this.#slots = Array.from({ length: size }, () => undefined);
    this.#free = Array.from({ length: size }, (_, i) => size - 1 - i);
  }

  /** The new request's id, or undefined when every slot is taken. */
  add(value: T): number | undefined {
    const slot = this.#free.pop();
    if (slot === undefined) return undefined;
    const id = this.#round++ * this.#slots.length + slot;
    this.#slots[slot] = { id, value };
    return id;
  }

  get(id: number): T | undefined {
    const entry = this.#slots[id % this.#slots.length];
    return entry?.id === id ? entry.value : undefined;
  }

  delete(id: number): void {
    const slot = id % this.#slots.length;
    if (this.#slots[slot]?.id !== id) return;
    this.#slots[slot] = undefined;
    this.#free.push(slot);
  }

  values(): T[] {
    return this.#slots.flatMap((entry) => (entry ? [entry.value] : []));
  }
}

interface Channel {
  id: string;
  socket: WebSocket | null;
  /** The listener reads binary (version 2) requests; see ./protocol.ts. */
  binary: boolean;
  /** This channel's share of the relay's budget of request bodies (a quarter of it). */
  budget: ByteBudget;
  pending: InFlight<Pending>;
  alive: boolean;
}

/** Hop-by-hop headers never cross the relay; content-length is set anew for the bytes relayed. */
function headersWithout(
  headers: IncomingMessage['headers'] | Record<string, string | string[]>,
): Record<string, string | string[]> {
  const { 'content-length': _length, ...rest } = withoutHopByHop(headers);
  return rest;
}

/**
 * The relay's channels, by id: which listener holds each, its requests in flight and its heartbeat.
 * A channel stays when its listener goes (senders then get 503, not 404) until room is needed.
 */
class Channels {
  readonly #channels = new Map<string, Channel>();
  readonly #limits: { maxChannels: number; maxInFlight: number; maxBufferedPerChannel: number };

  constructor(limits: { maxChannels: number; maxInFlight: number; maxBufferedPerChannel: number }) {
    this.#limits = limits;
  }

  get(id: string): Channel | undefined {
    return CHANNEL_PATTERN.test(id) ? this.#channels.get(id) : undefined;
  }

  /** Channels with a listener connected. */
  get connected(): number {
    let count = 0;
    for (const channel of this.#channels.values()) if (channel.socket) count += 1;
    return count;
  }

  /**
   * Whether a listener may connect to channel `id`: a known channel always may; a new one when there is
   * room, made from channels whose listener is gone, oldest first.
   */
  makeRoomFor(id: string): boolean {
    if (this.#channels.has(id) || this.#channels.size < this.#limits.maxChannels) return true;
    const idle = [...this.#channels.values()].find((c) => !c.socket);
    if (!idle) return false;
    this.#channels.delete(idle.id);
    return true;
  }

  /** Gives channel `id` to the listener on `socket`; one that held it before is told, and let go. */
  attach(socket: WebSocket, id: string, binary: boolean, publicUrl: string): void {
    let channel = this.#channels.get(id);
    if (!channel) {
      const { maxBufferedPerChannel, maxInFlight } = this.#limits;
      channel = {
        id,
        socket: null,
        binary,
        budget: new ByteBudget(maxBufferedPerChannel),
        pending: new InFlight(maxInFlight),
        alive: true,
      };
      this.#channels.set(id, channel);
    }
    const previous = channel.socket;
    if (previous) {
      // The newest holder of the token wins; the old one is told why it is let go.
      previous.send(
        JSON.stringify({
          type: 'replaced',
          message: 'Another clockhook listen connected with this channel token.',
        } satisfies ControlFrame),
      );
      previous.close(4001, 'replaced');
    }
    const current = channel;
    current.socket = socket;
    current.binary = binary;
    current.alive = true;
    socket.send(
      JSON.stringify({ type: 'ready', channel: id, publicUrl: `${publicUrl}/c/${id}` } satisfies ControlFrame),
    );
    socket.on('pong', () => {
      current.alive = true;
    });
    socket.on('message', (data, isBinary) => {
      const frame = parseResponseFrame(decodeFrame(data, isBinary));
      if (!frame) {
        // A bad frame closes this client only; every other channel goes on.
        socket.close(1008, 'bad frame');
        return;
      }
      current.pending.get(frame.id)?.resolve(frame);
    });
    socket.on('close', () => {
      if (current.socket !== socket) return;
      current.socket = null;
      for (const pending of current.pending.values()) pending.resolve(null);
    });
    socket.on('error', () => socket.terminate());
  }

  /** One heartbeat: a listener that did not answer the last ping is dropped; the others are pinged. */
  beat(): void {
    for (const channel of this.#channels.values()) {
      if (!channel.socket) continue;
      if (!channel.alive) {
        channel.socket.terminate();
        continue;
      }
      channel.alive = false;
      channel.socket.ping();
    }
  }

  closeAll(): void {
    for (const channel of this.#channels.values()) channel.socket?.terminate();
  }
}

/** What a request to the relay needs of it. */
interface RelayContext {
  channels: Channels;
  /** Bytes of request bodies held now, all channels together (see maxBuffered). */
  budget: ByteBudget;
  maxBody: number;
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

/** An HTTP request to the relay: the health check, or a delivery to `/c/<channel>/…` for its listener. */
async function handle(relay: RelayContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://relay');
  if (url.pathname === '/healthz') {
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ ok: true, channels: relay.channels.connected }));
    return;
  }
  const match = /^\/c\/([^/]+)(\/.*)?$/.exec(url.pathname);
  if (!match) {
    answerError(
      res,
      404,
      'not_found',
      'Deliveries go to /c/<channel>/…; see the public URL clockhook listen --relay printed.',
    );
    return;
  }
  const [, id, rest = '/'] = match;
  const started = performance.now();
  const log = (status: number) =>
    relay.onRequest({
      event: 'request',
      channel: id,
      method: req.method ?? '',
      path: rest,
      status,
      durationMs: Math.round(performance.now() - started),
    });
  const channel = relay.channels.get(id);
  if (!channel) {
    req.resume();
    answerError(res, 404, 'channel_not_found', 'No listener has connected to this channel since the relay started.');
    log(404);
    return;
  }

  // Every byte of the body counts against the relay's budget until the sender has its answer, or
  // until the body is refused and its bytes dropped.
  const lease = leaseFrom(relay.budget, channel.budget);
  try {
    const read = await readBody(req, { limit: relay.maxBody, lease, excess: 'drain' });
    if (read === 'busy') {
      const limits = `${formatMiB(relay.budget.limit)} in all, ${formatMiB(channel.budget.limit)} per channel`;
      answerError(
        res,
        503,
        'relay_busy',
        `The relay holds as many request bodies as it may (${limits}); retry later.`,
        {
          headers: { 'retry-after': relay.retryAfter, connection: 'close' },
        },
      );
      log(503);
      return;
    }
    if (read.truncated) {
      answerError(res, 413, 'payload_too_large', `The body is over ${relay.maxBody} bytes, the relay's limit.`, {
        headers: { connection: 'close' },
      });
      log(413);
      return;
    }
    if (!channel.socket) {
      // The service retries on its own schedule; the listener may be back by then.
      answerError(res, 503, 'listener_unavailable', 'The listener of this channel is not connected; retry later.', {
        headers: { 'retry-after': relay.retryAfter },
      });
      log(503);
      return;
    }
    const response = await exchange(channel, channel.socket, req, rest + url.search, read.chunks, relay.timeoutMs);
    if (response === 'full') {
      answerError(res, 429, 'too_many_requests', `More than ${relay.maxInFlight} requests in flight on this channel.`, {
        headers: { 'retry-after': '1' },
      });
      log(429);
    } else if (response === 'timeout') {
      answerError(res, 504, 'listener_timeout', `The listener did not answer within ${relay.timeoutMs / 1000} s.`);
      log(504);
    } else if (response === null) {
      answerError(res, 503, 'listener_unavailable', 'The listener went away before it answered; retry later.', {
        headers: { 'retry-after': relay.retryAfter },
      });
      log(503);
    } else {
      res.writeHead(response.status, { ...headersWithout(response.headers), 'content-length': response.body.length });
      res.end(response.body);
      log(response.status);
    }
  } finally {
    lease.giveBack();
  }
}

/** The relay's HTTP or HTTPS server, with the time limits that drop slow senders (slowloris). */
async function createRelayHttpServer(
  options: RelayServerOptions,
  onRequest: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<{ server: Server; tls: boolean }> {
  const tls =
    options.tlsCert && options.tlsKey
      ? { cert: await readFile(options.tlsCert), key: await readFile(options.tlsKey) }
      : null;
  const limits = hardenedServerOptions(options.requestTimeoutMs ?? 60_000);
  const server: Server = tls
    ? createHttpsServer({ ...tls, ...limits }, onRequest)
    : createHttpServer(limits, onRequest);
  server.on('clientError', answerClientError);
  return { server, tls: tls !== null };
}

/** Who may connect as a channel's listener: the holder of a token whose hash is the channel's id. */
function channelOfUpgrade(req: IncomingMessage): { id: string } | { status: number; message: string } {
  const url = new URL(req.url ?? '/', 'http://relay');
  if (url.pathname !== CONNECT_PATH) return { status: 401, message: 'Listeners connect at /connect.' };
  const token = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '';
  const claimed = req.headers['x-clockhook-channel'];
  if (!TOKEN_PATTERN.test(token))
    return { status: 401, message: 'A channel token of at least 128 random bits is required.' };
  const id = channelFor(token);
  if (claimed !== undefined && claimed !== id) return { status: 401, message: 'This token does not own that channel.' };
  return { id };
}

/**
 * The public side of the tunnel. Listeners connect out to it over one WebSocket and claim a channel
 * with a token; requests to `/c/<channel>/…` travel to that listener and its answer comes back.
 * Nothing is stored: no bodies, no tokens, no state that a restart would lose.
 */
export async function startRelayServer(options: RelayServerOptions = {}): Promise<RelayServer> {
  const maxBody = options.maxBody ?? 5 * 1024 * 1024;
  const budget = new ByteBudget(options.maxBuffered ?? 256 * 1024 * 1024);
  const maxChannels = options.maxChannels ?? 1000;
  const maxInFlight = options.maxInFlight ?? 256;
  const logger = options.logger ?? silentLogger;
  const channels = new Channels({ maxChannels, maxInFlight, maxBufferedPerChannel: Math.floor(budget.limit / 4) });
  const relay: RelayContext = {
    channels,
    budget,
    maxBody,
    maxInFlight,
    timeoutMs: options.responseTimeoutMs ?? 30_000,
    retryAfter: String(options.retryAfterSeconds ?? 10),
    onRequest: options.onRequest ?? (() => {}),
  };

  const { server, tls } = await createRelayHttpServer(options, (req, res) => {
    handle(relay, req, res).catch((error) => {
      logger.error(`relay: ${error instanceof Error ? error.message : error}`);
      answerError(res, 500, 'internal_error', 'The relay failed unexpectedly.');
    });
  });
  const wss = new WebSocketServer({ noServer: true, maxPayload: Math.ceil(maxBody * 1.4) + 1024 * 1024 });
  server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
    const claim = channelOfUpgrade(req);
    if ('status' in claim) return answerOnSocket(socket, claim.status, claim.message);
    if (!channels.makeRoomFor(claim.id))
      return answerOnSocket(socket, 503, `The relay holds its maximum of ${maxChannels} channels.`);
    wss.handleUpgrade(req, socket, head, (ws) =>
      channels.attach(ws, claim.id, req.headers[PROTOCOL_HEADER] === PROTOCOL_VERSION, publicUrl),
    );
  });
  const heartbeat = setInterval(() => channels.beat(), options.heartbeatMs ?? 15_000);
  heartbeat.unref();

  await listenOn(server, options.port ?? 8080, options.host ?? '0.0.0.0');
  const { port } = server.address() as AddressInfo;
  const bound = options.host && !isEveryInterface(options.host) ? options.host : '127.0.0.1';
  const url = `${tls ? 'https' : 'http'}://${bound.includes(':') ? `[${bound}]` : bound}:${port}`;
  const publicUrl = (options.publicUrl ?? url).replace(/\/+$/, '');

  let closing: Promise<void> | undefined;
  return {
    url,
    publicUrl,
    port,
    get connected() {
      return channels.connected;
    },
    close() {
      closing ??= (async () => {
        clearInterval(heartbeat);
        channels.closeAll();
        await new Promise<void>((resolve) => wss.close(() => resolve()));
        await closeNow(server);
      })();
      return closing;
    },
  };
}
