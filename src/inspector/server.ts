import type { AppStateEvent } from '../listener/index.js';
import { timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { WebSocket } from 'ws';
import { answerOnSocket } from '../http/index.js';
import type { MissedEvent } from '../api/index.js';
import type { Logger } from '../logger.js';
import { type InspectorConfig, inspectorConfig, type InspectorOptions } from './options.js';
import type { Capture } from '../store/index.js';
import { handleAction } from './actions.js';
import {
  BEAT_MS,
  captureTexts,
  RECENT_DELIVERIES,
  type InspectorMessage,
  missedForPage,
  publicEndpoint,
  snapshotMessage,
} from './protocol.js';
import { loadStaticFiles, type StaticFile } from './static.js';
import { closeNow, listenOn, sendInTurn } from '../http/index.js';
import { loadOrCreateToken } from '../folder/index.js';

export interface Inspector {
  /** The page URL, token included. */
  url: string;
  port: number;
  /** Number of connected pages. */
  readonly clients: number;
  /** Tells every page of the events missed while listen was off (none: the list is gone). */
  showMissed(missed: MissedEvent[]): void;
  /** Tells every page, and each that connects while it lasts, that the app is not answering (or is back). */
  showApp(event: AppStateEvent): void;
  close(): Promise<void>;
}

const HOST = '127.0.0.1';
const BROADCAST_MS = 20;

interface Client {
  socket: WebSocket;
  alive: boolean;
  /** Dropped captures while it was too slow; it gets a fresh snapshot once it drains. */
  stale: boolean;
}

function sameToken(given: string | null, token: string): boolean {
  if (!given) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Who may reach the inspector at `port`: its own loopback address by IP or by name, never another host. */
function loopbackOf(port: number) {
  return {
    hosts: new Set([`${HOST}:${port}`, `localhost:${port}`]),
    origins: new Set([`http://${HOST}:${port}`, `http://localhost:${port}`]),
  };
}

function securityHeaders(port: number): Record<string, string> {
  return {
    // No inline script anywhere: a payload that slipped into the DOM as HTML still could not run.
    'content-security-policy': `default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self' ws://${HOST}:${port} ws://localhost:${port}; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'x-frame-options': 'DENY',
    'cache-control': 'no-store',
  };
}

/** Serves the files of ui/, read at start, to requests for this loopback address only (DNS rebinding). */
function serveStatic(
  files: Map<string, StaticFile>,
  { port, token }: { port: number; token: string },
  req: IncomingMessage,
  res: ServerResponse,
): void {
  if (!loopbackOf(port).hosts.has(req.headers.host ?? '')) {
    res
      .writeHead(403, { 'content-type': 'text/plain' })
      .end('Forbidden: the inspector answers only to its own loopback address.');
    return;
  }
  const path = (req.url ?? '/').split('?', 1)[0];
  // The page asks when its WebSocket could not open: is its token refused (a stale or mistyped URL), or
  // is listen away? 204 or 401; it tells no more than the handshake's own 401, which a page cannot read.
  if (path === '/session' && req.method === 'GET') {
    const given = new URL(req.url ?? '/', `http://${HOST}`).searchParams.get('token');
    res.writeHead(sameToken(given, token) ? 204 : 401, { 'cache-control': 'no-store', ...securityHeaders(port) });
    res.end();
    return;
  }
  const file: StaticFile | undefined = req.method === 'GET' || req.method === 'HEAD' ? files.get(path) : undefined;
  if (!file) {
    res.writeHead(404, { 'content-type': 'text/plain', ...securityHeaders(port) }).end('Not found');
    return;
  }
  res.writeHead(200, { 'content-type': file.type, 'content-length': file.body.length, ...securityHeaders(port) });
  res.end(req.method === 'HEAD' ? undefined : file.body);
}

/** Why a WebSocket handshake is refused, or null when it may connect. */
function refusal(
  req: IncomingMessage,
  port: number,
  token: string,
): { status: 401 | 403 | 404; reason: string } | null {
  const url = new URL(req.url ?? '/', `http://${HOST}`);
  const allowed = loopbackOf(port);
  if (url.pathname !== '/ws') return { status: 404, reason: 'The inspector WebSocket is at /ws.' };
  if (!allowed.hosts.has(req.headers.host ?? ''))
    return { status: 403, reason: 'Host refused (DNS rebinding protection).' };
  const origin = req.headers.origin;
  // No Origin is a script, not a browser page: allowed with a valid token.
  if (origin !== undefined && !allowed.origins.has(origin))
    return { status: 403, reason: 'Origin refused: only the inspector page may connect.' };
  if (!sameToken(url.searchParams.get('token'), token))
    return { status: 401, reason: 'Missing or wrong token: open the URL clockhook listen printed.' };
  return null;
}

/**
 * The pages connected to the inspector: each gets a snapshot when it connects, then every change to
 * a capture (batched per BROADCAST_MS) and to the endpoint; its actions are answered; a dead page is
 * dropped by heartbeat, and a slow one skips captures until a resync snapshot.
 */
class PageHub {
  readonly #options: InspectorConfig;
  readonly #logger: Logger;
  readonly #maxBuffered: number;
  readonly #clients = new Set<Client>();
  /**
   * Changes to one capture within BROADCAST_MS go out once, in their latest state, with its text when the store
   * handed one on (see CaptureListener).
   */
  readonly #changed = new Map<string, { capture: Capture; text: string | undefined }>();
  #flushTimer: NodeJS.Timeout | null = null;
  readonly #timers: NodeJS.Timeout[];
  readonly #unsubscribe: () => void;
  #lastEndpoint: string;
  /** The forward targets not answering now (see AppWait), by target. */
  readonly #appsDown = new Map<string, AppStateEvent>();

  constructor(options: InspectorConfig) {
    this.#options = options;
    this.#logger = options.logger;
    this.#maxBuffered = options.maxBufferedBytes;
    this.#lastEndpoint = JSON.stringify(this.#currentEndpoint());
    this.#unsubscribe = options.store.subscribe((capture, text) => this.#captureChanged(capture, text));
    this.#timers = [
      setInterval(() => this.#heartbeat(), options.heartbeatMs),
      // A page cannot see WebSocket pings: this says "still here" to it, so that a listen that is frozen (SIGSTOP,
      // a debugger's breakpoint) shows as not answering within seconds, instead of "live" on an open socket.
      setInterval(() => this.#broadcast([{ type: 'beat' }]), BEAT_MS),
      setInterval(() => this.#resync(), 250),
      // The service may disable the endpoint (10 failed deliveries): re-read it, on an interval and
      // whenever a page connects, so pages show its real status.
      setInterval(() => void this.#refreshEndpoint(), options.endpointPollMs),
    ];
    for (const timer of this.#timers) timer.unref();
  }

  get size(): number {
    return this.#clients.size;
  }

  connect(socket: WebSocket): void {
    const client: Client = { socket, alive: true, stale: false };
    this.#clients.add(client);
    socket.on('pong', () => {
      client.alive = true;
    });
    socket.on('close', () => this.#clients.delete(client));
    socket.on('error', () => this.#clients.delete(client));
    socket.on('message', (data) => {
      handleAction(String(data), this.#options, (message) => this.#broadcast([message]))
        .then((reply) => reply && this.#send(client, reply))
        .catch((error) => this.#logger.error(`inspector: ${error instanceof Error ? error.stack : error}`));
    });
    this.#send(client, snapshotMessage(this.#options));
    for (const down of this.#appsDown.values()) this.#send(client, { type: 'app', ...down });
    void this.#refreshEndpoint();
  }

  /** The app went down or came back: said to every page; one that connects while it is down is told then. */
  appState(event: AppStateEvent): void {
    if (event.state === 'down') this.#appsDown.set(event.target, event);
    else this.#appsDown.delete(event.target);
    this.#broadcast([{ type: 'app', ...event }]);
  }

  close(): void {
    for (const timer of this.#timers) clearInterval(timer);
    if (this.#flushTimer) clearTimeout(this.#flushTimer);
    this.#unsubscribe();
    for (const client of this.#clients) client.socket.terminate();
  }

  #send(client: Client, message: InspectorMessage): void {
    if (client.socket.readyState === client.socket.OPEN) client.socket.send(JSON.stringify(message));
  }

  /**
   * Sends each message to every page, a page's messages of one flush in one write (sendInTurn).
   * Whether a page is too slow is decided before the flush, from what the kernel has not taken yet:
   * a page gets a whole flush or, once it is behind, no more captures until a resync.
   */
  broadcast(...messages: InspectorMessage[]): void {
    this.#broadcast(messages);
  }

  #broadcast(messages: InspectorMessage[]): void {
    this.#broadcastTexts(
      messages.map((message) => ({ capture: message.type === 'capture', text: JSON.stringify(message) })),
    );
  }

  /** Sends each text to every page; `capture`: one a page too slow to keep up skips (it gets a resync). */
  #broadcastTexts(texts: { capture: boolean; text: string }[]): void {
    for (const client of this.#clients) {
      if (client.socket.readyState !== client.socket.OPEN) continue;
      // a slow page: never buffer without bound, resync it later
      if (client.socket.bufferedAmount > this.#maxBuffered) client.stale = true;
      for (const { capture, text } of texts) if (!(client.stale && capture)) sendInTurn(client.socket, text);
    }
  }

  // A delivery and its forward result a few ms later cost one message, not two, in a burst.
  #captureChanged(capture: Capture, text: string | undefined): void {
    if (this.#clients.size === 0) return;
    this.#changed.delete(capture.id); // re-inserted last: pages get captures in the order they last changed
    this.#changed.set(capture.id, { capture, text });
    this.#flushTimer ??= setTimeout(() => this.#flushChanges(), BROADCAST_MS);
  }

  #flushChanges(): void {
    this.#flushTimer = null;
    const changed = [...this.#changed.values()];
    this.#changed.clear();
    const captures = changed.map((c) => c.capture);
    // Each with its event's story as the store tells it now: a later capture can change the event's state.
    const { listener } = this.#options;
    const stories = listener.stories.storiesOf(captures, { recent: RECENT_DELIVERIES });
    const texts = captureTexts(captures, stories, (capture, i) => changed[i].text ?? JSON.stringify(capture));
    this.#broadcastTexts(texts.map((text) => ({ capture: true, text })));
  }

  #heartbeat(): void {
    for (const client of this.#clients) {
      if (!client.alive) {
        client.socket.terminate();
        this.#clients.delete(client);
        continue;
      }
      client.alive = false;
      client.socket.ping();
    }
  }

  #resync(): void {
    for (const client of this.#clients) {
      if (client.stale && client.socket.bufferedAmount < this.#maxBuffered / 4) {
        client.stale = false;
        this.#send(client, { ...snapshotMessage(this.#options), resync: true });
      }
    }
  }

  #currentEndpoint() {
    return publicEndpoint(this.#options.getEndpoint(), this.#options.secretHint);
  }

  async #refreshEndpoint(): Promise<void> {
    if (this.#clients.size === 0 || !this.#options.refreshEndpoint) return;
    await this.#options.refreshEndpoint().catch(() => undefined);
    const next = JSON.stringify(this.#currentEndpoint());
    if (next !== this.#lastEndpoint) {
      this.#lastEndpoint = next;
      this.#broadcast([{ type: 'endpoint', endpoint: this.#currentEndpoint() }]);
    }
  }
}

/**
 * The inspector: serves ui/ and a WebSocket hub on 127.0.0.1 only. Every WebSocket carries the token;
 * a foreign Origin or a Host that is not this loopback address and port (DNS rebinding) is refused.
 */
export async function startInspector(given: InspectorOptions): Promise<Inspector> {
  const options = inspectorConfig(given);
  const files = await loadStaticFiles(options.uiDir);
  const token = await loadOrCreateToken(options.tokenPath);
  let port = 0;
  const server: Server = createServer((req, res) => serveStatic(files, { port, token }, req, res));
  // ws is loaded here, by a command that starts a page (every command loads the whole program: cli/program.ts).
  const { WebSocketServer } = await import('ws');
  const wss = new WebSocketServer({ noServer: true, maxPayload: 8 * 1024 * 1024 });
  const pages = new PageHub(options);
  server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
    const refused = refusal(req, port, token);
    if (refused) return answerOnSocket(socket, refused.status, refused.reason);
    wss.handleUpgrade(req, socket, head, (ws) => pages.connect(ws));
  });

  try {
    await listenOn(server, options.port, HOST);
  } catch (error) {
    pages.close();
    throw error;
  }
  port = (server.address() as AddressInfo).port;

  let closing: Promise<void> | undefined;
  return {
    url: `http://${HOST}:${port}/?token=${token}`,
    port,
    get clients() {
      return pages.size;
    },
    showMissed: (missed) => pages.broadcast({ type: 'missed', missed: missedForPage(missed) }),
    showApp: (event) => pages.appState(event),
    close() {
      closing ??= (async () => {
        pages.close();
        await new Promise<void>((resolve) => {
          wss.close(() => resolve());
        });
        await closeNow(server);
      })();
      return closing;
    },
  };
}
