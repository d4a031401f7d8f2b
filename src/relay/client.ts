import { RelayRefusedError, RelayUnreachableError } from './errors.js';
import type WebSocket from 'ws';
import { type Logger, silentLogger } from '../logger.js';
import { realSleep } from '../sleep.js';
import type { DirectAnswer, DirectRequest } from '../listener/direct.js';
import {
  CONNECT_PATH,
  channelFor,
  decodeFrame,
  encodeFrame,
  KEY_HEADER,
  parseRequestFrame,
  PROTOCOL_HEADER,
  PROTOCOL_VERSION,
  type RequestFrame,
} from './protocol.js';
import { describeConnectionError, sendInTurn } from '../http/index.js';

export interface RelayClientOptions {
  /** The relay's base URL, e.g. https://hooks.example.com */
  relayUrl: string;
  token: string;
  /** The access key a relay with keys asks of its listeners (`clockhook relay keys add`). */
  relayKey?: string;
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
  /** The relay refused this listener's access key (none, unknown, revoked): it must stop. */
  onRefused?: (message: string) => void;
  onGiveUp?: () => void;
}

export interface RelayClient {
  /** Resolves with the public URL once the relay has accepted the channel the first time. */
  ready: Promise<string>;
  close(): Promise<void>;
}

function websocketUrl(relayUrl: string): string {
  const url = new URL(CONNECT_PATH, relayUrl);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  return url.href;
}

/**
 * The outcome of one connection: it got as far as ready, it did not, another listener took the channel,
 * or the relay refused the access key (trying again would not help).
 */
type ConnectionEnd = 'connected' | 'failed' | 'replaced' | 'refused';

/**
 * Keeps one WebSocket to the relay open: reconnects with capped exponential backoff and jitter,
 * pings both ways, and hands each relayed request to the local listener in this process, where it
 * goes through exactly the path of a delivery over HTTP.
 */
export function connectRelay(options: RelayClientOptions): RelayClient {
  return new RelayConnection(options);
}

class RelayConnection implements RelayClient {
  readonly ready: Promise<string>;
  readonly #options: RelayClientOptions;
  readonly #logger: Logger;
  readonly #channel: string;
  readonly #encrypted: boolean;
  readonly #running: Promise<void>;
  #socket: WebSocket | null = null;
  #closed = false;
  #disconnectedSince: number | null = null;
  /** The relay accepted the channel at least once (so listen is running, and told, not failed to start). */
  #everReady = false;
  #lastFailure: { reason: string; code?: string } = { reason: '' };
  #resolveReady: (url: string) => void = () => {};
  #rejectReady: (error: Error) => void = () => {};

  constructor(options: RelayClientOptions) {
    this.#options = options;
    this.#logger = options.logger ?? silentLogger;
    this.#channel = channelFor(options.token);
    this.#encrypted = new URL(options.relayUrl).protocol === 'https:';
    this.ready = new Promise<string>((resolve, reject) => {
      this.#resolveReady = resolve;
      this.#rejectReady = reject;
    });
    this.ready.catch(() => {});
    this.#running = this.#run();
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#socket?.terminate();
    this.#rejectReady(new Error('closed'));
    await this.#running;
  }

  async #run(): Promise<void> {
    const { relayUrl, maxDisconnectedMs } = this.#options;
    const sleep = this.#options.sleep ?? realSleep;
    const minBackoff = this.#options.minBackoffMs ?? 250;
    const maxBackoff = this.#options.maxBackoffMs ?? 15_000;
    let attempt = 0;
    let everConnected = false;
    while (!this.#closed) {
      const outcome = await this.#connectOnce();
      if (this.#closed || outcome === 'replaced') return;
      if (outcome === 'refused') {
        this.#rejectReady(new RelayRefusedError(this.#lastFailure.reason));
        if (this.#everReady) this.#options.onRefused?.(this.#lastFailure.reason);
        return;
      }
      if (outcome === 'connected') {
        attempt = 0;
        everConnected = true;
      } else if (!everConnected) {
        // At start a relay that cannot be reached is an error to report, not to wait out.
        this.#rejectReady(
          new RelayUnreachableError(
            `could not connect to the relay at ${relayUrl}: ${this.#lastFailure.reason}`,
            this.#lastFailure.code,
          ),
        );
        return;
      }
      this.#disconnectedSince ??= Date.now();
      if (maxDisconnectedMs !== undefined && Date.now() - this.#disconnectedSince >= maxDisconnectedMs) {
        this.#options.onGiveUp?.();
        this.#rejectReady(new Error(`could not reach the relay at ${relayUrl} for ${maxDisconnectedMs / 1000} s`));
        return;
      }
      // Full jitter: many listeners that lost one relay do not come back in lockstep.
      const cap = Math.min(maxBackoff, minBackoff * 2 ** attempt++);
      await sleep(cap / 2 + Math.random() * (cap / 2));
    }
  }

  /** One connection, until it ends. */
  async #connectOnce(): Promise<ConnectionEnd> {
    const { relayUrl, token } = this.#options;
    const { WebSocket } = await import('ws'); // loaded by a listen on a relay only
    return new Promise((resolve) => {
      const ws = new WebSocket(websocketUrl(relayUrl), {
        headers: {
          authorization: `Bearer ${token}`,
          'x-clockhook-channel': this.#channel,
          [PROTOCOL_HEADER]: PROTOCOL_VERSION,
          ...(this.#options.relayKey ? { [KEY_HEADER]: this.#options.relayKey } : {}),
        },
        maxPayload: 64 * 1024 * 1024,
        handshakeTimeout: 10_000,
      });
      this.#socket = ws;
      const state = {
        wasReady: false,
        replaced: false,
        refused: '',
        failure: '',
        code: undefined as string | undefined,
        hop: undefined as string | undefined,
      };
      ws.on('upgrade', (res) => {
        state.hop = res.socket.remoteAddress;
      });
      const stopHeartbeat = this.#heartbeat(ws);
      ws.on('unexpected-response', (_req, res) => {
        state.failure = `the relay refused the connection (HTTP ${res.statusCode})`;
        if (res.statusCode === 401)
          this.#logger.error(
            `The relay at ${relayUrl} refused the channel token (401). Remove its record ("relay": "${relayUrl.replace(/\/+$/, '')}") from .clockhook/relay.json to make a new one; the others there keep their relays' public URLs.`,
          );
        // The relay says why (403: the access key, and how to get one; 429, 503: a limit). Read it first.
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.length < 16 && chunks.push(chunk));
        res.on('end', () => {
          const message = Buffer.concat(chunks).toString('utf8').slice(0, 1000).trim();
          if (res.statusCode === 403) state.refused = message;
          else if (message && res.statusCode !== 401) state.failure += `: ${message}`;
          ws.terminate();
        });
        res.on('error', () => ws.terminate());
      });
      ws.on('message', (data, isBinary) => this.#onMessage(ws, state, decodeFrame(data, isBinary), isBinary));
      ws.on('error', (error) => {
        state.failure ||= describeConnectionError(error, 'the relay');
        state.code ??= (error as NodeJS.ErrnoException).code;
      });
      ws.on('close', (code) => {
        stopHeartbeat();
        resolve(this.#ended(state, code));
      });
    });
  }

  /** Pings the relay; a relay that sent nothing for two intervals is dropped. Returns the stop. */
  #heartbeat(ws: WebSocket): () => void {
    let alive = true;
    const heard = () => {
      alive = true;
    };
    ws.on('pong', heard);
    ws.on('ping', heard);
    ws.on('message', heard);
    const timer = setInterval(() => {
      if (!alive) {
        ws.terminate();
        return;
      }
      alive = false;
      ws.ping();
    }, this.#options.heartbeatMs ?? 15_000);
    return () => clearInterval(timer);
  }

  #onMessage(
    ws: WebSocket,
    state: { wasReady: boolean; replaced: boolean; refused: string; hop: string | undefined },
    frame: ReturnType<typeof decodeFrame>,
    isBinary: boolean,
  ): void {
    if (frame?.type === 'ready' && typeof frame.publicUrl === 'string') {
      state.wasReady = true;
      this.#everReady = true;
      if (this.#disconnectedSince !== null) this.#logger.info(`Reconnected to the relay at ${this.#options.relayUrl}.`);
      this.#disconnectedSince = null;
      this.#resolveReady(frame.publicUrl);
      this.#options.onConnected?.(frame.publicUrl);
    } else if (frame?.type === 'replaced') {
      state.replaced = true;
      this.#options.onReplaced?.(String(frame.message));
    } else if (frame?.type === 'refused') {
      state.refused = String(frame.message);
    } else if (frame?.type === 'request' || isBinary) {
      const request = frame && parseRequestFrame(frame);
      if (request) this.#forward(request, ws, state.hop, isBinary);
      else
        this.#logger.warn(
          `The relay at ${this.#options.relayUrl} sent a malformed request frame; ignored. Is it a clockhook relay of this version?`,
        );
    }
  }

  /** What a closed connection means for the loop, said to the user when it had been ready. */
  #ended(
    state: { wasReady: boolean; replaced: boolean; refused: string; failure: string; code?: string },
    code: number,
  ): ConnectionEnd {
    if (this.#closed) return 'failed';
    if (state.refused) {
      this.#lastFailure = { reason: state.refused, code: 'refused' };
      return 'refused';
    }
    if (state.replaced || code === 4001) {
      if (!state.replaced) this.#options.onReplaced?.('Another clockhook listen connected with this channel token.');
      return 'replaced';
    }
    const reason = state.failure || `connection closed (${code})`;
    this.#lastFailure = { reason, code: state.code };
    if (!state.wasReady) return 'failed';
    this.#logger.warn(
      `Lost the relay at ${this.#options.relayUrl} (${reason}); reconnecting. Deliveries meanwhile get 503 and the service retries them.`,
    );
    this.#options.onDisconnected?.(reason);
    return 'connected';
  }

  /**
   * `hop`: the relay's address as this side sees it; `binary`: the request came as a binary message,
   * so the answer goes as one (text to a version-1 relay).
   */
  #forward(frame: RequestFrame, ws: WebSocket, hop: string | undefined, binary: boolean): void {
    const reply = ({ status, headers, body }: DirectAnswer) => {
      if (ws.readyState === ws.OPEN)
        sendInTurn(ws, encodeFrame({ type: 'response', id: frame.id, status, headers, body }, binary));
    };
    const request = {
      method: frame.method,
      path: frame.path,
      headers: frame.headers,
      body: frame.body,
      remoteAddress: hop,
      encrypted: this.#encrypted,
    };
    // Promise first: a handler that throws at once must not take the connection (or the process) down.
    Promise.resolve()
      .then(() => this.#options.handle(request))
      .then(reply, (error: Error) => {
        const message = JSON.stringify({
          error: {
            type: 'api_error',
            code: 'listener_failed',
            message: `The local listener failed on this request: ${error.message}`,
          },
        });
        reply({ status: 502, headers: { 'content-type': 'application/json' }, body: Buffer.from(message) });
      });
  }
}
