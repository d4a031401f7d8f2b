import { randomBytes, timingSafeEqual } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { type WebSocket, WebSocketServer } from 'ws';
import { type Logger, silentLogger } from '../logger.js';
import { type Capture, writePrivateFile } from '../store/index.js';
import { type ActionContext, handleAction, type InspectorMessage, publicEndpoint, snapshotMessage } from './protocol.js';
import { loadStaticFiles, type StaticFile } from './static.js';
import { closeNow, listenOn, sendInTurn } from '../net.js';

export interface InspectorOptions extends ActionContext {
  /** @default 4301; always bound to 127.0.0.1 */
  port?: number;
  /** Where the token is kept so an open page reconnects after a restart. */
  tokenPath: string;
  /** @default the package's ui/ folder */
  uiDir?: string;
  /** How often to ping pages (and terminate dead ones). @default 15000 */
  heartbeatMs?: number;
  /** How often to re-read the endpoint, to show status changes. @default 15000 */
  endpointPollMs?: number;
  /** A page whose unsent data exceeds this gets a resync snapshot instead of more captures. @default 4 MiB */
  maxBufferedBytes?: number;
  logger?: Logger;
}

export interface Inspector {
  /** The page URL, token included. */
  url: string;
  port: number;
  /** Number of connected pages. */
  readonly clients: number;
  close(): Promise<void>;
}

const HOST = '127.0.0.1';
const BROADCAST_MS = 20;
const DEFAULT_UI_DIR = fileURLToPath(new URL('../../ui', import.meta.url));

interface Client {
  socket: WebSocket;
  alive: boolean;
  /** Dropped captures while it was too slow; it gets a fresh snapshot once it drains. */
  stale: boolean;
}

async function loadOrCreateToken(path: string): Promise<string> {
  const existing = (await readFile(path, 'utf8').catch(() => '')).trim();
  if (/^[A-Za-z0-9_-]{32,}$/.test(existing)) return existing;
  const token = randomBytes(32).toString('base64url');
  await writePrivateFile(path, `${token}\n`);
  return token;
}

function sameToken(given: string | null, token: string): boolean {
  if (!given) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

function refuseUpgrade(socket: Socket, status: 401 | 403 | 404, reason: string): void {
  const text = { 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found' }[status];
  socket.end(`HTTP/1.1 ${status} ${text}\r\nconnection: close\r\ncontent-type: text/plain\r\ncontent-length: ${Buffer.byteLength(reason)}\r\n\r\n${reason}`);
}

/**
 * The inspector: serves ui/ and a WebSocket hub on 127.0.0.1 only. Every WebSocket carries the token;
 * a foreign Origin or a Host that is not this loopback address and port (DNS rebinding) is refused.
 */
export async function startInspector(options: InspectorOptions): Promise<Inspector> {
  const logger = options.logger ?? silentLogger;
  const heartbeatMs = options.heartbeatMs ?? 15_000;
  const maxBuffered = options.maxBufferedBytes ?? 4 * 1024 * 1024;
  const files = await loadStaticFiles(options.uiDir ?? DEFAULT_UI_DIR);
  const token = await loadOrCreateToken(options.tokenPath);
  const clients = new Set<Client>();
  let port = 0;

  const allowedHosts = () => new Set([`${HOST}:${port}`, `localhost:${port}`]);
  const allowedOrigins = () => new Set([`http://${HOST}:${port}`, `http://localhost:${port}`]);

  function securityHeaders(): Record<string, string> {
    return {
      // No inline script anywhere: a payload that slipped into the DOM as HTML still could not run.
      'content-security-policy': `default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self' ws://${HOST}:${port} ws://localhost:${port}; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      'x-frame-options': 'DENY',
      'cache-control': 'no-store',
    };
  }

  function serve(req: IncomingMessage, res: ServerResponse): void {
    if (!allowedHosts().has(req.headers.host ?? '')) {
      res.writeHead(403, { 'content-type': 'text/plain' }).end('Forbidden: the inspector answers only to its own loopback address.');
      return;
    }
    const path = (req.url ?? '/').split('?', 1)[0];
    const file: StaticFile | undefined = req.method === 'GET' || req.method === 'HEAD' ? files.get(path) : undefined;
    if (!file) {
      res.writeHead(404, { 'content-type': 'text/plain', ...securityHeaders() }).end('Not found');
      return;
    }
    res.writeHead(200, { 'content-type': file.type, 'content-length': file.body.length, ...securityHeaders() });
    res.end(req.method === 'HEAD' ? undefined : file.body);
  }

  const server: Server = createServer(serve);
  const wss = new WebSocketServer({ noServer: true, maxPayload: 8 * 1024 * 1024 });

  server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
    const url = new URL(req.url ?? '/', `http://${HOST}`);
    if (url.pathname !== '/ws') return refuseUpgrade(socket, 404, 'The inspector WebSocket is at /ws.');
    if (!allowedHosts().has(req.headers.host ?? '')) return refuseUpgrade(socket, 403, 'Host refused (DNS rebinding protection).');
    const origin = req.headers.origin;
    // No Origin is a script, not a browser page: allowed with a valid token.
    if (origin !== undefined && !allowedOrigins().has(origin)) return refuseUpgrade(socket, 403, 'Origin refused: only the inspector page may connect.');
    if (!sameToken(url.searchParams.get('token'), token)) return refuseUpgrade(socket, 401, 'Missing or wrong token: open the URL clockhook listen printed.');
    wss.handleUpgrade(req, socket, head, (ws) => connect(ws));
  });

  const send = (client: Client, message: InspectorMessage) => {
    if (client.socket.readyState === client.socket.OPEN) client.socket.send(JSON.stringify(message));
  };

  function connect(socket: WebSocket): void {
    const client: Client = { socket, alive: true, stale: false };
    clients.add(client);
    socket.on('pong', () => {
      client.alive = true;
    });
    socket.on('close', () => clients.delete(client));
    socket.on('error', () => clients.delete(client));
    socket.on('message', (data) => {
      handleAction(String(data), options, broadcast)
        .then((reply) => reply && send(client, reply))
        .catch((error) => logger.error(`inspector: ${error instanceof Error ? error.stack : error}`));
    });
    send(client, snapshotMessage(options));
    void refreshEndpoint();
  }

  function broadcast(message: InspectorMessage): void {
    broadcastAll([message]);
  }

  /**
   * Sends each message to every page, a page's messages of one flush in one write (sendInTurn).
   * Whether a page is too slow is decided before the flush, from what the kernel has not taken yet:
   * a page gets a whole flush or, once it is behind, no more captures until a resync.
   */
  function broadcastAll(messages: InspectorMessage[]): void {
    const texts = messages.map((message) => JSON.stringify(message));
    for (const client of clients) {
      if (client.socket.readyState !== client.socket.OPEN) continue;
      // a slow page: never buffer without bound, resync it later
      if (client.socket.bufferedAmount > maxBuffered) client.stale = true;
      for (const [i, text] of texts.entries()) if (!(client.stale && messages[i].type === 'capture')) sendInTurn(client.socket, text);
    }
  }

  // Changes to one capture within BROADCAST_MS go out once, in their latest state: a delivery and
  // its forward result a few ms later cost one message, not two, in a burst.
  const changed = new Map<string, Capture>();
  let flushTimer: NodeJS.Timeout | null = null;
  const flushChanges = () => {
    flushTimer = null;
    const captures = [...changed.values()];
    changed.clear();
    broadcastAll(captures.map((capture) => ({ type: 'capture', capture })));
  };
  const unsubscribe = options.store.subscribe((capture) => {
    if (clients.size === 0) return;
    changed.delete(capture.id); // re-inserted last: pages get captures in the order they last changed
    changed.set(capture.id, capture);
    flushTimer ??= setTimeout(flushChanges, BROADCAST_MS);
  });

  const heartbeat = setInterval(() => {
    for (const client of clients) {
      if (!client.alive) {
        client.socket.terminate();
        clients.delete(client);
        continue;
      }
      client.alive = false;
      client.socket.ping();
    }
  }, heartbeatMs);
  heartbeat.unref();
  const resync = setInterval(() => {
    for (const client of clients) {
      if (client.stale && client.socket.bufferedAmount < maxBuffered / 4) {
        client.stale = false;
        send(client, { ...snapshotMessage(options), resync: true });
      }
    }
  }, 250);
  resync.unref();

  // The service may disable the endpoint (10 failed deliveries): re-read it, on an interval and
  // whenever a page connects, so pages show its real status.
  const currentEndpoint = () => publicEndpoint(options.getEndpoint(), options.secretHint);
  let lastEndpoint = JSON.stringify(currentEndpoint());
  async function refreshEndpoint(): Promise<void> {
    if (clients.size === 0 || !options.refreshEndpoint) return;
    await options.refreshEndpoint().catch(() => undefined);
    const next = JSON.stringify(currentEndpoint());
    if (next !== lastEndpoint) {
      lastEndpoint = next;
      broadcast({ type: 'endpoint', endpoint: currentEndpoint() });
    }
  }
  const poll = setInterval(refreshEndpoint, options.endpointPollMs ?? 15_000);
  poll.unref();

  await listenOn(server, options.port ?? 4301, HOST);
  port = (server.address() as AddressInfo).port;

  let closing: Promise<void> | undefined;
  return {
    url: `http://${HOST}:${port}/?token=${token}`,
    port,
    get clients() {
      return clients.size;
    },
    close() {
      closing ??= (async () => {
        clearInterval(heartbeat);
        clearInterval(resync);
        clearInterval(poll);
        if (flushTimer) clearTimeout(flushTimer);
        unsubscribe();
        for (const client of clients) client.socket.terminate();
        await new Promise<void>((resolve) => {
          wss.close(() => resolve());
        });
        await closeNow(server);
      })();
      return closing;
    },
  };
}
