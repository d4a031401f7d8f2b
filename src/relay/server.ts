import { readFile } from 'node:fs/promises';
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { WebSocketServer } from 'ws';
import { answerClientError, answerError, answerOnSocket, ByteBudget, hardenedServerOptions } from '../http/index.js';
import { type Logger, silentLogger } from '../logger.js';
import { closeNow, isEveryInterface, listenOn } from '../net.js';
import { Channels } from './channels.js';
import { handle, type RelayContext, type RelayRequestLog } from './handle.js';
import { CONNECT_PATH, channelFor, PROTOCOL_HEADER, PROTOCOL_VERSION, TOKEN_PATTERN } from './protocol.js';

export type { RelayRequestLog };

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

/** The relay's limits and what it shares with each request, from its options. */
function relayContext(options: RelayServerOptions): RelayContext {
  const budget = new ByteBudget(options.maxBuffered ?? 256 * 1024 * 1024);
  const maxChannels = options.maxChannels ?? 1000;
  const maxInFlight = options.maxInFlight ?? 256;
  const channels = new Channels({ maxChannels, maxInFlight, maxBufferedPerChannel: Math.floor(budget.limit / 4) });
  return {
    channels,
    budget,
    maxBody: options.maxBody ?? 5 * 1024 * 1024,
    maxChannels,
    maxInFlight,
    timeoutMs: options.responseTimeoutMs ?? 30_000,
    retryAfter: String(options.retryAfterSeconds ?? 10),
    onRequest: options.onRequest ?? (() => {}),
  };
}

/**
 * The public side of the tunnel. Listeners connect out to it over one WebSocket and claim a channel
 * with a token; requests to `/c/<channel>/…` travel to that listener and its answer comes back.
 * Nothing is stored: no bodies, no tokens, no state that a restart would lose.
 */
export async function startRelayServer(options: RelayServerOptions = {}): Promise<RelayServer> {
  const logger = options.logger ?? silentLogger;
  const relay = relayContext(options);
  const { channels, maxBody, maxChannels } = relay;
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
  const heartbeat = setInterval(() => channels.beat(), options.heartbeatMs ?? 15_000).unref();

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
