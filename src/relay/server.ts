import { readFile } from 'node:fs/promises';
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import type { WebSocketServer } from 'ws';
import {
  answerClientError,
  answerEarly,
  answerError,
  answerOnSocket,
  ByteBudget,
  hardenedServerOptions,
} from '../http/index.js';
import type { Logger } from '../logger.js';
import { closeNow, isEveryInterface, listenOn } from '../http/index.js';
import { type BusHandlers, RelayBus } from './bus.js';
import { CLAIM_MS } from './claims.js';
import { Channels } from './channels.js';
import { ConnectionGuard, lowLimitWords, openFileLimit } from './descriptors.js';
import { KeyGate } from './gate.js';
import { handle, handleRemote, type RelayContext, type RelayRequestLog } from './handle.js';
import { FileKeyStore, RedisKeyStore } from './keys.js';
import { relayMetrics } from './metrics.js';
import { CONNECT_PATH, channelFor, KEY_HEADER, PROTOCOL_HEADER, PROTOCOL_VERSION, TOKEN_PATTERN } from './protocol.js';
import { type RelayConfig, relayConfig, type RelayServerOptions } from './options.js';

export type { RelayRequestLog, RelayServerOptions };

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
  options: RelayConfig,
  onRequest: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<{ server: Server; tls: boolean }> {
  const tls =
    options.tlsCert && options.tlsKey
      ? { cert: await readFile(options.tlsCert), key: await readFile(options.tlsKey) }
      : null;
  const limits = hardenedServerOptions(options.requestTimeoutMs);
  const server: Server = tls
    ? createHttpsServer(Object.assign({}, tls, limits), onRequest)
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

const AT_LIMIT = 'The relay is at its open-file limit; retry in a moment.';

/** A request the relay has no descriptor to spare for: 503 with Retry-After, and the connection closed. */
function refuseForDescriptors(relay: RelayContext, guard: ConnectionGuard, req: IncomingMessage, res: ServerResponse) {
  relay.metrics.refusals.labels('descriptors').inc();
  guard.say('a sender was answered 503');
  res.shouldKeepAlive = false;
  answerEarly(req, res, 503, 'relay_at_limit', AT_LIMIT, { headers: { 'retry-after': relay.retryAfter } });
}

const REVOKED = 'The access key of this listener was revoked on the relay. Ask its operator for a new one.';

/** The relay's limits and what it shares with each request, from its options. */
async function relayContext(options: RelayConfig, logger: Logger): Promise<RelayContext> {
  const budget = new ByteBudget(options.maxBuffered);
  const { maxChannels, maxInFlight, maxInFlightPerKey } = options;
  const inFlight = { count: 0 };
  const metrics = await relayMetrics({ channels: () => channels.connected, inFlight: () => inFlight.count });
  const bus = options.redis ? await RelayBus.open(options.redis, logger, metrics) : null;
  const limits = { maxChannels, maxInFlight, maxInFlightPerKey, maxBufferedPerChannel: Math.floor(budget.limit / 4) };
  const channels = new Channels(limits, (channel) => {
    bus?.release([{ channel: channel.id, keyId: channel.keyId }]).catch(() => {});
  });
  const store = bus ? new RedisKeyStore(bus) : options.keysFile ? new FileKeyStore(options.keysFile) : null;
  const gate = new KeyGate(store, logger, (valid) => channels.letGoUnless(valid, REVOKED));
  return {
    channels,
    budget,
    maxBody: options.maxBody,
    maxChannels,
    maxInFlight,
    maxInFlightPerKey,
    timeoutMs: options.responseTimeoutMs,
    retryAfter: String(options.retryAfterSeconds),
    onRequest: options.onRequest,
    tracer: options.tracer,
    bus,
    gate,
    metrics,
    inFlight,
  };
}

/** Whether a listener's handshake opens its channel here: token, access key, limits, and on Redis the claim. */
async function admitListener(
  relay: RelayContext,
  req: IncomingMessage,
  maxChannelsPerKey: number,
): Promise<{ id: string; keyId: string | null } | { status: number; message: string }> {
  const claim = channelOfUpgrade(req);
  if ('status' in claim) return claim;
  const header = req.headers[KEY_HEADER];
  const admission = relay.gate.admit(typeof header === 'string' ? header : undefined);
  if ('status' in admission) return admission;
  const { bus, channels } = relay;
  const refused = relay.metrics.refusals;
  if (bus && !bus.up) {
    refused.labels('redis').inc();
    return { status: 503, message: 'The relay cannot reach Redis now; retry in a moment.' };
  }
  if (!channels.makeRoomFor(claim.id)) {
    refused.labels('channels').inc();
    return { status: 503, message: `The relay holds its maximum of ${relay.maxChannels} channels.` };
  }
  const { keyId } = admission;
  if (keyId !== null) {
    const held = bus ? await bus.claims.keyChannels(keyId, claim.id) : channels.heldBy(keyId);
    if (held >= maxChannelsPerKey) {
      refused.labels('key-channels').inc();
      return {
        status: 429,
        message: `This access key holds its ${maxChannelsPerKey} channels already; stop one of its listens, or ask the relay's operator for a key of your own.`,
      };
    }
  }
  await bus?.claim(claim.id, keyId);
  return { id: claim.id, keyId };
}

/** How often a relay checks on Redis that it still holds its channels (another instance took them meanwhile). */
const HOLD_MS = 20_000;
/** A heartbeat tick: each pings its share of the channels, so that none blocks the loop for long. */
const BEAT_TICK_MS = 25;

/** The timers of a relay: heartbeats, liveness and claims on Redis, keys read again, key use written. */
function startTimers(
  relay: RelayContext,
  { heartbeatMs, keysMs }: { heartbeatMs: number; keysMs: number },
): () => void {
  const { bus, channels, gate } = relay;
  const message = 'Another clockhook listen connected with this channel token.';
  const renew = async (all = false) => {
    if (!bus?.up) return;
    const lost = await bus.renew(all ? channels.held() : undefined).catch(() => []);
    for (const channel of lost) channels.letGo(channel, { type: 'replaced', message }, 4001);
  };
  const tick = Math.min(BEAT_TICK_MS, heartbeatMs);
  let last = performance.now();
  const timers = [
    setInterval(() => {
      const now = performance.now();
      relay.metrics.heartbeatLag.set(Math.max(0, now - last - tick) / 1000);
      last = now;
      channels.beat(tick / heartbeatMs);
    }, tick),
    setInterval(() => void renew(), CLAIM_MS / 3),
    setInterval(() => void renew(true), HOLD_MS),
    setInterval(() => void gate.refresh(), keysMs),
    setInterval(() => void gate.flush(bus, (keyId) => channels.heldBy(keyId)).catch(() => {}), keysMs),
  ];
  for (const timer of timers) timer.unref();
  relay.renew = () => renew(true);
  return () => timers.forEach(clearInterval);
}

/** What this instance does with what the other instances send it over Redis. */
function busHandlers(relay: RelayContext): BusHandlers {
  const message = 'Another clockhook listen connected with this channel token.';
  return {
    request: (request) => handleRemote(relay, request),
    replaced: (channel) => relay.channels.letGo(channel, { type: 'replaced', message }, 4001),
    keysChanged: () => void relay.gate.refresh(),
    recovered: () => {
      void relay.renew?.();
      void relay.gate.refresh();
    },
  };
}

/** Listeners' handshakes: each admitted (token, key, limits, claim) gets its channel, or a refusal. */
function acceptListeners(
  server: Server,
  wss: WebSocketServer,
  relay: RelayContext,
  guard: ConnectionGuard,
  maxChannelsPerKey: number,
  publicUrl: () => string,
): void {
  server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
    if (guard.full) {
      relay.metrics.refusals.labels('descriptors').inc();
      guard.say('a listener was refused (503)');
      return answerOnSocket(socket, 503, AT_LIMIT);
    }
    admitListener(relay, req, maxChannelsPerKey).then(
      (admitted) => {
        if ('status' in admitted) return answerOnSocket(socket, admitted.status, admitted.message);
        if (socket.destroyed) return;
        const binary = req.headers[PROTOCOL_HEADER] === PROTOCOL_VERSION;
        wss.handleUpgrade(req, socket, head, (ws) =>
          relay.channels.attach(ws, admitted.id, binary, publicUrl(), admitted.keyId),
        );
      },
      () => answerOnSocket(socket, 503, 'The relay cannot reach Redis now; retry in a moment.'),
    );
  });
}

/**
 * The public side of the tunnel. Listeners connect out to it over one WebSocket and claim a channel
 * with a token; requests to `/c/<channel>/…` travel to that listener and its answer comes back.
 * Nothing is stored: no bodies, no tokens, no state that a restart would lose. With `redis`, several
 * instances share their channels: a request that comes in on one travels to the instance holding its
 * listener over Redis pub/sub, and the answer comes back the same way.
 */
export async function startRelayServer(given: RelayServerOptions = {}): Promise<RelayServer> {
  const options = relayConfig(given);
  const { logger } = options;
  const { WebSocketServer: Server } = await import('ws'); // loaded by a relay only
  const relay = await relayContext(options, logger);
  const { channels, maxBody, bus } = relay;
  await bus?.start(busHandlers(relay));
  await relay.gate.refresh();
  const limit = await openFileLimit();
  const guard = new ConnectionGuard(limit, logger);
  const { server, tls } = await createRelayHttpServer(options, (req, res) => {
    if (guard.full) return refuseForDescriptors(relay, guard, req, res);
    handle(relay, req, res).catch((error) => {
      logger.error(`relay: ${error instanceof Error ? error.message : error}`);
      answerError(res, 500, 'internal_error', 'The relay failed unexpectedly.');
    });
  });
  const wss = new Server({ noServer: true, maxPayload: Math.ceil(maxBody * 1.4) + 1024 * 1024 });
  guard.watch(server);
  const low = limit === null ? null : lowLimitWords(limit, relay.maxChannels);
  if (low) logger.warn(low);
  acceptListeners(server, wss, relay, guard, options.maxChannelsPerKey, () => publicUrl);
  const stopTimers = startTimers(relay, { heartbeatMs: options.heartbeatMs, keysMs: options.keysRefreshMs });

  try {
    await listenOn(server, options.port, options.host);
  } catch (error) {
    stopTimers();
    await bus?.close();
    throw error;
  }
  const { port } = server.address() as AddressInfo;
  const bound = !isEveryInterface(options.host) ? options.host : '127.0.0.1';
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
        stopTimers();
        // Let this instance's channels go on Redis first: the other instances then say 503, not route here.
        await bus?.stopping(channels.held());
        channels.closeAll();
        await new Promise<void>((resolve) => wss.close(() => resolve()));
        await closeNow(server);
        await bus?.close();
      })();
      return closing;
    },
  };
}
