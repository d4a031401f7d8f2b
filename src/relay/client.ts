import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import WebSocket from 'ws';
import { type Logger, realSleep, silentLogger } from '../logger.js';
import type { DirectAnswer, DirectRequest } from '../listener/direct.js';
import { writePrivateFile } from '../store/index.js';
import { CONNECT_PATH, channelFor, decodeFrame, encodeFrame, parseRequestFrame, PROTOCOL_HEADER, PROTOCOL_VERSION, type RequestFrame } from './protocol.js';
import { sendInTurn } from '../net.js';

/** `.clockhook/relay.json`: the token made by listen, so a restart gets the same public URL. */
export interface RelayRecord {
  relay: string;
  channel: string;
  token: string;
  publicUrl: string;
}

export interface RelayClientOptions {
  /** The relay's base URL, e.g. https://hooks.example.com */
  relayUrl: string;
  token: string;
  /** Where relayed requests go: the local listener (`Listener.handleDirect`). */
  handle: (request: DirectRequest) => Promise<DirectAnswer>;
  logger?: Logger;
  sleep?: (ms: number) => Promise<void>;
  /** First reconnect delay; doubles up to `maxBackoffMs`, with jitter. @default 250 */
  minBackoffMs?: number;
  /** @default 15000 */
  maxBackoffMs?: number;
  /** Ping interval; a relay silent for two intervals is treated as lost. @default 15000 */
  heartbeatMs?: number;
  /** Give up (onGiveUp) after being disconnected this long. @default never */
  maxDisconnectedMs?: number;
  onConnected?: (publicUrl: string) => void;
  onDisconnected?: (reason: string) => void;
  /** Another listener took the channel: this one must stop. */
  onReplaced?: (message: string) => void;
  onGiveUp?: () => void;
}

export interface RelayClient {
  /** Resolves with the public URL once the relay has accepted the channel the first time. */
  ready: Promise<string>;
  close(): Promise<void>;
}

/** The token made for this relay earlier, or a new one (256 random bits) remembered in `path` (0600). */
export async function loadRelayRecord(path: string, relayUrl: string): Promise<RelayRecord> {
  const relay = relayUrl.replace(/\/+$/, '');
  try {
    const record = JSON.parse(await readFile(path, 'utf8')) as RelayRecord;
    if (record.relay === relay && typeof record.token === 'string' && channelFor(record.token) === record.channel) return record;
  } catch {
    // none yet, or unreadable: make one
  }
  const token = randomBytes(32).toString('base64url');
  return { relay, token, channel: channelFor(token), publicUrl: '' };
}

export const saveRelayRecord = (path: string, record: RelayRecord) => writePrivateFile(path, `${JSON.stringify(record, null, 2)}\n`);

function websocketUrl(relayUrl: string): string {
  const url = new URL(CONNECT_PATH, relayUrl);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  return url.href;
}

/**
 * Keeps one WebSocket to the relay open: reconnects with capped exponential backoff and jitter,
 * pings both ways, and hands each relayed request to the local listener in this process, where it
 * goes through exactly the path of a delivery over HTTP.
 */
export function connectRelay(options: RelayClientOptions): RelayClient {
  const logger = options.logger ?? silentLogger;
  const sleep = options.sleep ?? realSleep;
  const minBackoff = options.minBackoffMs ?? 250;
  const maxBackoff = options.maxBackoffMs ?? 15_000;
  const heartbeatMs = options.heartbeatMs ?? 15_000;
  const channel = channelFor(options.token);
  const encrypted = new URL(options.relayUrl).protocol === 'https:';
  let socket: WebSocket | null = null;
  let closed = false;
  let disconnectedSince: number | null = null;
  let lastFailure = '';
  let resolveReady: (url: string) => void = () => {};
  let rejectReady: (error: Error) => void = () => {};
  const ready = new Promise<string>((resolve, reject) => {
    resolveReady = resolve;
    rejectReady = reject;
  });
  ready.catch(() => {});

  /**
   * `hop`: the relay's address as this side sees it; `encrypted`: reached over TLS; `binary`: the
   * request came as a binary message, so the answer goes as one (text to a version-1 relay).
   */
  function forward(frame: RequestFrame, ws: WebSocket, hop: string | undefined, binary: boolean): void {
    const reply = ({ status, headers, body }: DirectAnswer) => {
      if (ws.readyState === WebSocket.OPEN) sendInTurn(ws, encodeFrame({ type: 'response', id: frame.id, status, headers, body }, binary));
    };
    const request = { method: frame.method, path: frame.path, headers: frame.headers, body: frame.body, remoteAddress: hop, encrypted };
    // Promise first: a handler that throws at once must not take the connection (or the process) down.
    Promise.resolve()
      .then(() => options.handle(request))
      .then(reply, (error: Error) => {
        const message = JSON.stringify({ error: { type: 'api_error', code: 'listener_failed', message: `The local listener failed on this request: ${error.message}` } });
        reply({ status: 502, headers: { 'content-type': 'application/json' }, body: Buffer.from(message) });
      });
  }

  async function run(): Promise<void> {
    let attempt = 0;
    let everConnected = false;
    while (!closed) {
      const outcome = await connectOnce();
      if (closed || outcome === 'replaced') return;
      if (outcome === 'connected') {
        attempt = 0;
        everConnected = true;
      } else if (!everConnected) {
        // At start a relay that cannot be reached is an error to report, not to wait out.
        rejectReady(new Error(`could not connect to the relay at ${options.relayUrl}: ${lastFailure}`));
        return;
      }
      disconnectedSince ??= Date.now();
      if (options.maxDisconnectedMs !== undefined && Date.now() - disconnectedSince >= options.maxDisconnectedMs) {
        options.onGiveUp?.();
        rejectReady(new Error(`could not reach the relay at ${options.relayUrl} for ${options.maxDisconnectedMs / 1000} s`));
        return;
      }
      // Full jitter: many listeners that lost one relay do not come back in lockstep.
      const cap = Math.min(maxBackoff, minBackoff * 2 ** attempt++);
      await sleep(cap / 2 + Math.random() * (cap / 2));
    }
  }

  /** One connection, until it ends: 'connected' if it got as far as ready, 'failed' if not. */
  function connectOnce(): Promise<'connected' | 'failed' | 'replaced'> {
    return new Promise((resolve) => {
      const ws = new WebSocket(websocketUrl(options.relayUrl), {
        headers: { authorization: `Bearer ${options.token}`, 'x-clockhook-channel': channel, [PROTOCOL_HEADER]: PROTOCOL_VERSION },
        maxPayload: 64 * 1024 * 1024,
        handshakeTimeout: 10_000,
      });
      socket = ws;
      let wasReady = false;
      let replaced = false;
      let alive = true;
      let failure = '';
      let hop: string | undefined;
      ws.on('upgrade', (res) => {
        hop = res.socket.remoteAddress;
      });
      const heartbeat = setInterval(() => {
        if (!alive) {
          ws.terminate();
          return;
        }
        alive = false;
        ws.ping();
      }, heartbeatMs);
      ws.on('pong', () => {
        alive = true;
      });
      ws.on('ping', () => {
        alive = true;
      });
      ws.on('unexpected-response', (_req, res) => {
        failure = `the relay refused the connection (HTTP ${res.statusCode})`;
        if (res.statusCode === 401) logger.error(`The relay at ${options.relayUrl} refused the channel token (401). Delete .clockhook/relay.json to make a new one.`);
        ws.terminate();
      });
      ws.on('message', (data, isBinary) => {
        alive = true;
        const frame = decodeFrame(data, isBinary);
        if (frame?.type === 'ready' && typeof frame.publicUrl === 'string') {
          wasReady = true;
          if (disconnectedSince !== null) logger.info(`Reconnected to the relay at ${options.relayUrl}.`);
          disconnectedSince = null;
          resolveReady(frame.publicUrl);
          options.onConnected?.(frame.publicUrl);
        } else if (frame?.type === 'replaced') {
          replaced = true;
          options.onReplaced?.(String(frame.message));
        } else if (frame?.type === 'request' || isBinary) {
          const request = frame && parseRequestFrame(frame);
          if (request) forward(request, ws, hop, isBinary);
          else logger.warn(`The relay at ${options.relayUrl} sent a malformed request frame; ignored. Is it a clockhook relay of this version?`);
        }
      });
      ws.on('error', (error) => {
        failure ||= error.message;
      });
      ws.on('close', (code) => {
        clearInterval(heartbeat);
        if (closed) return resolve('failed');
        if (replaced || code === 4001) {
          if (!replaced) options.onReplaced?.('Another clockhook listen connected with this channel token.');
          return resolve('replaced');
        }
        const reason = failure || `connection closed (${code})`;
        lastFailure = reason;
        if (wasReady) {
          logger.warn(`Lost the relay at ${options.relayUrl} (${reason}); reconnecting. Deliveries meanwhile get 503 and the service retries them.`);
          options.onDisconnected?.(reason);
        }
        resolve(wasReady ? 'connected' : 'failed');
      });
    });
  }

  const running = run();
  return {
    ready,
    async close() {
      closed = true;
      socket?.terminate();
      rejectReady(new Error('closed'));
      await running;
    },
  };
}
