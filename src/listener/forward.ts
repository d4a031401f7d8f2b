import { Agent as HttpAgent, type ClientRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { Stream } from 'node:stream';
import httpProxy from 'http-proxy';
import { withoutHopByHop } from '../http/index.js';
import { describeConnectionError } from '../http/index.js';
import { type CaptureForward, encodeBody, encodeBodyHead } from '../store/index.js';
import { appCannotHaveSeen, AppWait, type AppStateEvent } from './app-wait.js';

/**
 * The first 16 KiB of the app's answer are kept in the capture, as much as of a large request body
 * (INLINE_BODY_CHARS), with its whole size. Enough for an error's title and the top of its stack trace;
 * a framework's development error page can be hundreds of KB, and 1,000 of them would be kept in memory
 * and sent to every page that connects.
 */
export const FORWARD_BODY_LIMIT = 16 * 1024;

export type ForwardOutcome =
  | { kind: 'answered'; forward: CaptureForward }
  | {
      kind: 'failed';
      code: 'forward_failed' | 'forward_timeout';
      statusCode: 502 | 504;
      message: string;
      forward: CaptureForward;
    };

interface Pending {
  res: ServerResponse;
  target: string;
  started: number;
  timedOut: boolean;
  timer: NodeJS.Timeout;
  proxyReq?: ClientRequest;
  /** The bytes, to send again on a new connection (see #resend). */
  body: Buffer;
  /** Times sent again after the app had closed the kept-alive connection it went out on. */
  resent: number;
  /** Times it found the app not answering (see AppWait), and when it first did. */
  waits: number;
  waitStarted: number;
  /** Its answer is read but kept from the sender (an injected `timeout`: see Injector). */
  keepAnswer: boolean;
  /** Its capture, for the command that sends it again. */
  captureId: string;
  resolve(outcome: ForwardOutcome): void;
}

/** Sends again per delivery at most. Each goes on a new connection, never a pooled one (see #resend), so one is enough; the bound keeps an app that resets every connection from getting it without end. */
const MAX_RESENDS = 3;

/** The X-Forwarded-* headers http-proxy appends its values to (`xfwd`), as it sets them. */
const APPENDED_FORWARD_HEADERS = ['x-forwarded-for', 'x-forwarded-port', 'x-forwarded-proto'];

/**
 * A forward on its way hangs off its request, and leaves it when it settles; http-proxy gets one
 * callback for all requests. Not a Map of requests nor a closure per request: those kept every
 * request's objects alive past the young generation (docs/performance-notes.md, "Garbage collection").
 */
const PENDING = Symbol('clockhook.forward');
type Forwarded = IncomingMessage & { [PENDING]?: Pending };
const pendingOf = (req: IncomingMessage): Pending | undefined => (req as Forwarded)[PENDING];

/**
 * The request body for http-proxy, which only ever calls `pipe(proxyReq)` on its `buffer` option:
 * the bytes are already in memory, so they are written in one go, without a stream per request
 * (`Readable.from` cost a few per cent of the listener's CPU under load).
 */
function bodySource(body: Buffer): Stream {
  return { pipe: (destination: NodeJS.WritableStream) => destination.end(body) } as unknown as Stream;
}

const describeError = (error: NodeJS.ErrnoException) => describeConnectionError(error, 'the app');

/**
 * Takes off `req` the listeners http-proxy added for a send that is over: each `web()` adds an 'aborted' and an
 * 'error' one, the newest. A delivery sent again 11 times while the app was down made Node warn of a leak.
 */
function forgetSend(req: IncomingMessage): void {
  for (const event of ['aborted', 'error'] as const) {
    const newest = req.listeners(event).at(-1) as ((...args: unknown[]) => void) | undefined;
    if (newest) req.removeListener(event, newest);
  }
}

export interface ForwarderOptions {
  /** How long a delivery waits for an app that is not answering (see AppWait); 0: not at all. @default 0 */
  waitForAppMs?: number;
  onAppState?: (event: AppStateEvent) => void;
}

export interface ProxyTarget {
  protocol: string;
  host: string;
  hostname: string;
  port: string;
  path: string;
  pathname: string;
}

/**
 * An origin in the shape http-proxy reads a target in (url.parse's), made once: a string target
 * would be parsed again for every request. The hostname has no IPv6 brackets, as http.request wants.
 */
export function proxyTarget(target: URL): ProxyTarget {
  const hostname = target.hostname.startsWith('[') ? target.hostname.slice(1, -1) : target.hostname;
  return { protocol: target.protocol, host: target.host, hostname, port: target.port, path: '/', pathname: '/' };
}

/**
 * Forwards deliveries to the developer's app with http-proxy: same method, path, query and headers,
 * the exact raw bytes (never re-serialized), hop-by-hop headers dropped, X-Forwarded-* added, over
 * keep-alive connections. The app's answer is streamed back to the sender and its head kept.
 */
export class Forwarder {
  readonly #proxy: httpProxy;
  readonly #agent: HttpAgent;
  /** For a send again (see #resend): a new connection each time. */
  readonly #freshAgent: HttpAgent;
  readonly #proxyTarget: ProxyTarget;
  /**
   * `user:password` of a target given with them (`http://user:pass@localhost:3000`), sent as Basic
   * authorization (a delivery's own Authorization header wins): the app gets what the URL says.
   */
  readonly #auth: string | undefined;

  /** Waiting for an app that is not answering; null when --wait-for-app is 0. */
  readonly #wait: AppWait | null;

  constructor(
    readonly target: URL,
    private readonly timeoutMs: number,
    { waitForAppMs = 0, onAppState = () => {} }: ForwarderOptions = {},
  ) {
    this.#wait = waitForAppMs > 0 ? new AppWait(target.origin, waitForAppMs, onAppState) : null;
    this.#proxyTarget = proxyTarget(target);
    this.#auth =
      target.username || target.password
        ? `${decodeURIComponent(target.username)}:${decodeURIComponent(target.password)}`
        : undefined;
    this.#agent =
      target.protocol === 'https:' ? new HttpsAgent({ keepAlive: true }) : new HttpAgent({ keepAlive: true });
    this.#freshAgent =
      target.protocol === 'https:' ? new HttpsAgent({ keepAlive: false }) : new HttpAgent({ keepAlive: false });
    this.#proxy = httpProxy.createProxyServer({
      agent: this.#agent,
      selfHandleResponse: true,
      xfwd: true,
      changeOrigin: true,
      // Local apps often use self-signed certificates; this only ever talks to the developer's own app.
      secure: false,
    });
    this.#proxy.on('proxyReq', (proxyReq, req) => {
      const pending = pendingOf(req);
      if (pending) pending.proxyReq = proxyReq;
    });
    this.#proxy.on('proxyRes', (proxyRes, req) => this.#relayAnswer(proxyRes, req));
  }

  /**
   * Sends `body` (the raw bytes already read from `req`) to `path` on the target and streams the
   * answer to `res`. On failure nothing is written: the caller answers with the outcome's status.
   */
  forward(
    req: IncomingMessage,
    res: ServerResponse,
    body: Buffer,
    path: string,
    { keepAnswer = false, captureId }: { keepAnswer?: boolean; captureId: string },
  ): Promise<ForwardOutcome> {
    return new Promise((resolve) => {
      (req as Forwarded)[PENDING] = {
        res,
        target: this.urlFor(path),
        started: performance.now(),
        timedOut: false,
        timer: setTimeout(this.#timedOut, this.timeoutMs, req),
        body,
        resent: 0,
        waits: 0,
        waitStarted: 0,
        keepAnswer,
        captureId,
        resolve,
      };
      // The body is sent exactly as received, with its real length: chunked framing is per hop.
      const headers = withoutHopByHop(req.headers);
      headers['content-length'] = String(body.length);
      req.headers = headers as IncomingMessage['headers'];
      req.url = path;
      this.#proxy.web(
        req,
        res,
        { target: this.#proxyTarget, auth: this.#auth, buffer: bodySource(body) },
        this.#failed,
      );
    });
  }

  /** Ends a forward once: later calls (an error after the answer, say) find it gone. */
  #settle(req: IncomingMessage, outcome: ForwardOutcome): void {
    const pending = pendingOf(req);
    if (!pending) return;
    (req as Forwarded)[PENDING] = undefined;
    clearTimeout(pending.timer);
    pending.resolve(outcome);
  }

  readonly #timedOut = (req: IncomingMessage): void => {
    const pending = pendingOf(req);
    if (!pending) return;
    pending.timedOut = true;
    pending.proxyReq?.destroy(new Error('forward timed out'));
  };

  /** http-proxy's callback when the app could not be reached or did not answer. */
  readonly #failed = (error: Error, req: IncomingMessage): void => {
    const pending = pendingOf(req);
    if (!pending) return;
    const failure = error as NodeJS.ErrnoException;
    const { timedOut } = pending;
    if (!timedOut && failure.code === 'ECONNRESET' && pending.proxyReq?.reusedSocket && pending.resent < MAX_RESENDS) {
      pending.resent += 1;
      this.#resend(req, pending);
      return;
    }
    if (!timedOut && this.#wait && appCannotHaveSeen(failure, pending.proxyReq)) {
      void this.#waitForApp(req, pending, this.#wait, failure);
      return;
    }
    this.#fail(req, pending, failure);
  };

  /** The app cannot have seen the delivery (not listening): held and sent again until it answers, or its wait is over. */
  async #waitForApp(req: IncomingMessage, pending: Pending, wait: AppWait, failure: NodeJS.ErrnoException) {
    pending.waits += 1;
    if (pending.waits === 1) pending.waitStarted = performance.now();
    pending.proxyReq = undefined;
    // The app's time to answer counts from when it is there again.
    clearTimeout(pending.timer);
    if (await wait.hold(performance.now() - pending.waitStarted, pending.waits)) {
      pending.timer = setTimeout(this.#timedOut, this.timeoutMs, req);
      this.#resend(req, pending);
      return;
    }
    wait.gaveUp();
    this.#fail(req, pending, failure);
  }

  #fail(req: IncomingMessage, pending: Pending, failure: NodeJS.ErrnoException): void {
    const { target, timedOut } = pending;
    // A command the reader runs as it is, wherever the message is read (the service's attempts, an MCP tool).
    const again = `npx clockhook replay ${pending.captureId}`;
    const seconds = Math.round((performance.now() - pending.waitStarted) / 100) / 10;
    const waited = pending.waits > 0 ? ` It was not answering for ${seconds} s (--wait-for-app).` : '';
    const message = timedOut
      ? `The app at ${target} did not answer within ${this.timeoutMs} ms, the time a receiver has: the service counts this attempt as failed.`
      : failure.code === 'ECONNRESET'
        ? `The app at ${target} closed the connection without answering: it may have crashed handling this delivery (see its log). The delivery is captured; once the app is fixed, send it again: ${again}.`
        : `Could not reach the app at ${target}: ${describeError(failure)}.${waited} Is it running, and does listen's --forward-to point at it? The delivery is captured; once the app is up, send it again: ${again}.`;
    this.#settle(req, {
      kind: 'failed',
      code: timedOut ? 'forward_timeout' : 'forward_failed',
      statusCode: timedOut ? 504 : 502,
      message,
      forward: {
        target,
        statusCode: null,
        headers: {},
        body: '',
        bodyEncoding: 'utf8',
        durationMs: Math.round(performance.now() - pending.started),
        error: timedOut ? `timed out after ${this.timeoutMs} ms` : describeError(failure),
        ...this.#waited(pending),
      },
    });
  }

  /** How long a forward waited for the app, for its capture (nothing when it did not). */
  #waited(pending: Pending): { waitedMs?: number } {
    return pending.waits > 0 ? { waitedMs: Math.round(performance.now() - pending.waitStarted) } : {};
  }

  /**
   * The app closed a kept-alive connection just as this request went out on it: its idle timeout (5 s in
   * Node and uvicorn, for instance) met a delivery arriving at that moment. It did not answer on that
   * connection, so the request goes again on another, as Node's documentation of `request.reusedSocket`
   * advises. Had the app received it after all, it gets it twice, which the contract's at-least-once
   * delivery already asks receivers to handle; the sender is answered once, with the answer that came.
   */
  #resend(req: IncomingMessage, pending: Pending): void {
    pending.proxyReq = undefined;
    forgetSend(req);
    // http-proxy appended its X-Forwarded-* values to the request's headers: take them off again.
    for (const name of APPENDED_FORWARD_HEADERS) {
      const value = req.headers[name] as string | undefined;
      if (value === undefined) continue;
      const comma = value.lastIndexOf(',');
      if (comma === -1) delete req.headers[name];
      else req.headers[name] = value.slice(0, comma);
    }
    // On a connection of its own: the pool's other kept-alive ones may be stale too (an app that restarted
    // closed them all), and a send again must not meet them one after another.
    const agent = this.#freshAgent;
    this.#proxy.web(
      req,
      pending.res,
      { target: this.#proxyTarget, auth: this.#auth, buffer: bodySource(pending.body), agent },
      this.#failed,
    );
  }

  #relayAnswer(proxyRes: IncomingMessage, req: IncomingMessage): void {
    this.#wait?.answered();
    const pending = pendingOf(req);
    if (pending) this.#stream(proxyRes, req, pending);
  }

  #stream(proxyRes: IncomingMessage, req: IncomingMessage, pending: Pending): void {
    const { res } = pending;
    const headers = withoutHopByHop(proxyRes.headers);
    const statusCode = proxyRes.statusCode ?? 502;
    // An answer kept from the sender (an injected timeout) is read all the same, and recorded.
    const toSender = !pending.keepAnswer;
    if (toSender) res.writeHead(statusCode, proxyRes.statusMessage, headers);
    const kept: Buffer[] = [];
    let keptBytes = 0;
    let size = 0;
    proxyRes.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (keptBytes < FORWARD_BODY_LIMIT) {
        kept.push(chunk.subarray(0, FORWARD_BODY_LIMIT - keptBytes));
        keptBytes += Math.min(chunk.length, FORWARD_BODY_LIMIT - keptBytes);
      }
      if (toSender) res.write(chunk);
    });
    const finish = (error?: string) => {
      // An answer the app cut short is not passed off as whole: the sender's connection is closed (with
      // Content-Length or chunked framing it then sees an error), and the capture records it as cut.
      // Kept from the sender (an injected timeout): the listener holds the sender's answer (see Injector).
      if (toSender && error) res.destroy();
      else if (toSender && !res.writableEnded) res.end();
      const head = Buffer.concat(kept);
      this.#settle(req, {
        kind: 'answered',
        forward: {
          target: pending.target,
          statusCode,
          headers,
          ...(size > keptBytes ? Object.assign(encodeBodyHead(head), { bodyTruncated: true }) : encodeBody(head)),
          bodySize: size,
          durationMs: Math.round(performance.now() - pending.started),
          ...(error ? { error, cut: true } : {}),
          ...this.#waited(pending),
        },
      });
    };
    proxyRes.on('end', () => finish());
    // Cut short, in words rather than Node's ('aborted'): the status says "cut", this says how.
    const cut = 'the app closed the connection before its answer was complete';
    proxyRes.on('error', () => finish(pending.timedOut ? `answer cut: timed out after ${this.timeoutMs} ms` : cut));
    proxyRes.on('close', () => {
      if (!proxyRes.complete) finish(cut);
    });
  }

  /**
   * The URL a path goes to, for display. Not `new URL(path, target)`: a path such as `//evil.test/x`
   * would resolve to another host there, while the request really goes to the target.
   */
  urlFor(path: string): string {
    return `${this.target.origin}${path}`;
  }

  /** listen is stopping: deliveries held for an app that is not answering are answered now (502), none held again. */
  stopWaiting(): void {
    this.#wait?.close();
  }

  close(): void {
    this.stopWaiting();
    this.#proxy.close();
    this.#agent.destroy();
    this.#freshAgent.destroy();
  }
}
