import { request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Socket } from 'node:net';
import { StringDecoder } from 'node:string_decoder';
import type { WebSocket } from 'ws';

/**
 * The Fetch standard's bad ports (https://fetch.spec.whatwg.org/#port-blocking): browsers will not open a
 * page on them, and Node's fetch, which clockhook calls APIs with, will not connect to them. A test holds
 * this list to Node's own fetch.
 */
const BAD_PORTS = new Set([
  1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95, 101, 102, 103, 104, 109, 110,
  111, 113, 115, 117, 119, 123, 135, 137, 139, 143, 161, 179, 389, 427, 465, 512, 513, 514, 515, 526, 530, 531, 532,
  540, 548, 554, 556, 563, 587, 601, 636, 989, 990, 993, 995, 1719, 1720, 1723, 2049, 3659, 4045, 4190, 5060, 5061,
  6000, 6566, 6665, 6666, 6667, 6668, 6669, 6679, 6697, 10080,
]);

/** Whether browsers and fetch refuse `port` (see BAD_PORTS). */
export function isBadPort(port: number): boolean {
  return BAD_PORTS.has(port);
}

/** Why such a port cannot be used, for messages. */
export const BAD_PORT_WHY = 'the Fetch standard blocks it, with 9, 6667 and others';

/** "is on port 6000, which fetch refuses…" when `url` is on one of BAD_PORTS; null otherwise. */
export function badPortProblem(url: URL): string | null {
  return url.port && isBadPort(Number(url.port))
    ? `is on port ${url.port}, which fetch refuses to connect to (${BAD_PORT_WHY})`
    : null;
}

/** Whether a server bound to `host` listens on every interface (`0.0.0.0`, `::`) rather than one address. */
export const isEveryInterface = (host: string) => host === '0.0.0.0' || host === '::';

/** Listens on `port` and `host`; rejects with the server's error (EADDRINUSE, EACCES…) instead of throwing it later. */
export function listenOn(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/** Stops accepting and drops every open connection, idle or not; resolves once the server is closed. */
export function closeNow(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

/**
 * Starts something on `port`; when that port is taken, says so with `taken` and starts it on a
 * free one instead. Any other failure is the caller's.
 */
export async function onPortOrFree<T>(
  port: number,
  start: (port: number) => Promise<T>,
  taken: (port: number) => void,
): Promise<T> {
  try {
    return await start(port);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
    taken(port);
    return start(0);
  }
}

const corked = new WeakSet<Socket>();

/**
 * Sends a message (text, or binary for a Buffer) on a WebSocket so that every frame sent to it
 * during one turn of the event loop leaves in one write: its TCP socket stays corked until the
 * turn's check phase. ws writes each frame at once otherwise, one system call per frame, which
 * under load cost the listener and the relay more than building the frames. (`_socket` is ws's
 * own field for that socket.)
 */
export function sendInTurn(ws: WebSocket, data: string | Buffer): void {
  const tcp = (ws as WebSocket & { _socket?: Socket })._socket;
  if (tcp && !corked.has(tcp)) {
    corked.add(tcp);
    tcp.cork();
    setImmediate(() => {
      corked.delete(tcp);
      tcp.uncork();
    });
  }
  ws.send(data);
}

export interface PostOptions {
  /** Aborts the request, or the reading of its answer (which then ends with what arrived). */
  signal: AbortSignal;
  /** How many characters of the answer's body to keep; the rest is not read. */
  maxChars: number;
  /** @default true */
  rejectUnauthorized?: boolean;
}

/**
 * POSTs `body` with the headers given and no others but Host, Content-Length and Connection, as a
 * webhook sender does; fetch would add Accept, Accept-Language, Sec-Fetch-Mode and Accept-Encoding.
 * Each request has a connection of its own, closed after it: a kept-alive one, reused just as the
 * receiver closes it, would fail a delivery for nothing.
 * Resolves with the status and the beginning of the answer: an answer cut short, by the receiver or
 * by `signal`, still resolves with what arrived. Rejects with the request's error (its `code`:
 * ECONNREFUSED, ECONNRESET, ENOTFOUND…, or ABORT_ERR from `signal`) when no answer came. Redirects are
 * answers, never followed (their Location comes with them).
 */
export function postBytes(
  target: URL,
  headers: Record<string, string | string[]>,
  body: string | Buffer,
  options: PostOptions,
): Promise<{ status: number; body: string; headers: IncomingHttpHeaders; location?: string }> {
  return new Promise((resolve, reject) => {
    const request = target.protocol === 'https:' ? httpsRequest : httpRequest;
    const sent = { ...headers, 'content-length': String(Buffer.byteLength(body)) };
    const req = request(
      target,
      {
        method: 'POST',
        headers: sent,
        agent: false,
        signal: options.signal,
        rejectUnauthorized: options.rejectUnauthorized ?? true,
      },
      (res) => {
        const decoder = new StringDecoder('utf8');
        let text = '';
        const { location } = res.headers;
        const done = () =>
          resolve({
            status: res.statusCode ?? 0,
            body: (text + decoder.end()).slice(0, options.maxChars),
            headers: res.headers,
            ...(location ? { location } : {}),
          });
        res.on('data', (chunk: Buffer) => {
          text += decoder.write(chunk);
          if (text.length < options.maxChars) return;
          done();
          res.destroy();
        });
        res.on('end', done);
        res.on('error', done);
        res.on('close', done);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * A failed request to a receiver in words, for the listener's forward, the sandbox's attempts and check
 * alike; `peer` names who was asked ("the app", "the receiver").
 */
export function describeConnectionError(error: NodeJS.ErrnoException, peer: string): string {
  switch (error.code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ECONNRESET':
      // Node's code both for a reset and for a close ("socket hang up"), after the request went out.
      return `${peer} closed the connection without answering`;
    case 'ENOTFOUND':
      return 'host not found';
    case 'EPROTO':
      // OpenSSL's "wrong version number", most often: an https:// address of something that speaks plain HTTP.
      return `the TLS handshake failed: ${peer} does not seem to speak TLS (is its address http://?)`;
    default:
      return error.message;
  }
}

/** Node's codes for a TLS certificate it does not trust: self-signed, an unknown issuer, expired, for another name. */
const CERTIFICATE_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/** Whether a connection failed because the peer's certificate is not trusted. */
export const isCertificateError = (code: string | undefined) => code !== undefined && CERTIFICATE_CODES.has(code);

/**
 * Whether a receiver's answer reads as a refused signature: the statuses handlers refuse a delivery they
 * could not verify with (400, 401, 403). The listener and check both say "another secret?" on them.
 */
export const isSignatureRefusal = (status: number) => status === 400 || status === 401 || status === 403;

/**
 * A URL as shown to people (the ready line, the page, messages): its password, if it has one, as
 * `***`, since those go to terminals, logs and CI output.
 */
export function shownUrl(url: URL): string {
  if (!url.password) return url.href;
  const shown = new URL(url.href);
  shown.password = '***';
  return shown.href;
}
