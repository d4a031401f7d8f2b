import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  checkEnvelope,
  DEFAULT_TOLERANCE_SECONDS,
  maskSecret,
  signPayload,
  verifySignature,
} from '../contract/index.js';
import { type Logger, silentLogger } from '../logger.js';
import {
  type Capture,
  type CaptureForward,
  type CaptureSignature,
  type CaptureStore,
  encodeBody,
  newCaptureId,
} from '../store/index.js';
import { type DirectAnswer, type DirectRequest, directExchange } from './direct.js';
import { answerExcerpt, Forwarder, HOP_BY_HOP } from './forward.js';
import { joinTargetPath, normalizeBasePath, pathUnderBase } from './target.js';
import { isEveryInterface, isSignatureRefusal, listenOn } from '../net.js';
import { formatMiB } from '../size.js';
import { type BudgetLease, ByteBudget, leaseFrom } from '../budget.js';

export interface DeliveryReport {
  /** Null for a request refused before it was read whole (listener_busy): nothing was captured. */
  captureId: string | null;
  source: Capture['source'];
  eventId: string | null;
  type: string | null;
  signature: CaptureSignature['status'];
  signatureReason?: string;
  /** The oldest capture still held with the same event id: the service delivered this event before. */
  duplicateOf: string | null;
  method: string;
  /** Where it went (forward target), or null when the listener answered itself. */
  target: string | null;
  /** The status the sender got. */
  status: number;
  durationMs: number;
  error?: string;
  /** What the app said, when it answered other than 2xx (see answerExcerpt). */
  answer?: string;
}

export interface ListenerOptions {
  store: CaptureStore;
  /** The app, or null for capture-only mode (the listener answers 200 itself). */
  forwardTo: URL | null;
  /** @default 4300 */
  port?: number;
  /** @default '127.0.0.1' */
  host?: string;
  /** Only requests under this path are deliveries. @default '/' */
  path?: string;
  /** The endpoint secret; null while unknown (signatures are then `unchecked`). */
  secret?: string | null;
  /** Forward even when the signature is invalid or missing. @default false */
  skipVerify?: boolean;
  /** @default 300 */
  tolerance?: number;
  /** Time the app has to answer. @default 30000 (the contract's) */
  timeoutMs?: number;
  /** @default 5 MiB */
  maxBodyBytes?: number;
  /**
   * Bytes of request bodies held at once (being read, or handed over, until their request is
   * answered); a request that would go past it is answered 503 listener_busy. At least maxBodyBytes.
   * @default 64 MiB
   */
  maxBufferedBytes?: number;
  /** Headers and body must arrive within this. @default 60000 */
  requestTimeoutMs?: number;
  /** @default Date.now */
  now?: () => number;
  /** @default silent */
  logger?: Logger;
  /** Told about every request once it is answered. */
  onDelivery?: (report: DeliveryReport) => void;
  /**
   * Hold every request, read but not checked, until `release()`: `listen` takes its port first (so that
   * a taken one fails at once, and the endpoint can be registered at its URL), and learns the secret only
   * once the endpoint is. What the sender or the relay sends meanwhile would otherwise be "unchecked" and
   * forwarded, forged or not. @default false
   */
  held?: boolean;
}

export interface ReplayRequest {
  captureId: string;
  /** resign: current time and the endpoint secret; asis: the original bytes and header. */
  mode: 'resign' | 'asis';
  /** An edited body (resign only). */
  body?: string;
}

export interface ReplayResult {
  captureId: string;
  statusCode: number;
  durationMs: number;
}

export class ReplayError extends Error {
  override readonly name = 'ReplayError';
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** The largest body a delivery may have; beyond it the answer is 413. */
export const MAX_BODY_BYTES = 5 * 1024 * 1024;

const DEFAULTS = {
  port: 4300,
  host: '127.0.0.1',
  path: '/',
  secret: null as string | null,
  skipVerify: false,
  tolerance: DEFAULT_TOLERANCE_SECONDS,
  timeoutMs: 30_000,
  maxBodyBytes: MAX_BODY_BYTES,
  maxBufferedBytes: 64 * 1024 * 1024,
  requestTimeoutMs: 60_000,
  now: Date.now,
  logger: silentLogger,
  onDelivery: (_report: DeliveryReport) => {},
  held: false,
};

type ListenerConfig = typeof DEFAULTS & { store: CaptureStore; forwardTo: URL | null };

/** Set on a replay's answer (which never leaves the process) so that `replay` learns the new capture. */
const CAPTURE_HEADER = 'x-clockhook-capture';

interface Body {
  bytes: Buffer;
  size: number;
  truncated: boolean;
}

/** Counts `bytes` against the listener's budget of bodies held; false (nothing counted) when over it. */
type Take = BudgetLease['take'];

/** What a request's body turned out to be: its bytes, or `busy` when the budget had no room for them. */
type Read = (take: Take) => Promise<Body | 'busy'>;

/**
 * Reads the raw body once, as bytes, each chunk counted by `take` as it arrives. Past `limit` it
 * stops at once, keeping the first `limit` bytes: the answer is 413 and the connection is closed,
 * so an endless body costs nothing more. When `take` refuses a chunk it stops the same way, keeping
 * nothing: the answer is 503.
 */
function readBody(req: IncomingMessage, limit: number, take: Take): Promise<Body | 'busy'> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = () => {
      req.off('data', onData);
      req.pause();
    };
    const onData = (chunk: Buffer) => {
      const kept = size + chunk.length <= limit ? chunk : chunk.subarray(0, limit - size);
      size += chunk.length;
      if (!take(kept.length)) {
        stop();
        resolve('busy');
        return;
      }
      chunks.push(kept);
      if (size <= limit) return;
      stop();
      const declared = Number(req.headers['content-length']);
      resolve({
        bytes: Buffer.concat(chunks),
        size: Number.isFinite(declared) && declared > size ? declared : size,
        truncated: true,
      });
    };
    req.on('data', onData);
    req.on('end', () => resolve({ bytes: Buffer.concat(chunks), size, truncated: false }));
    req.on('error', reject);
  });
}

/** A body handed over whole, cut at `limit` like one read from a socket, and counted by `take`. */
function wholeBody(bytes: Buffer, limit: number, take: Take): Body | 'busy' {
  const body =
    bytes.length > limit
      ? { bytes: bytes.subarray(0, limit), size: bytes.length, truncated: true }
      : { bytes, size: bytes.length, truncated: false };
  return take(body.bytes.length) ? body : 'busy';
}

/** The request's headers as stored: Node gives them lower-cased already; undefined ones are dropped. */
function copyHeaders(req: IncomingMessage): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(req.headers)) if (value !== undefined) headers[name] = value;
  return headers;
}

/** Malformed HTTP never reaches a handler: answer what Node's parser found, then close. */
export function answerClientError(error: NodeJS.ErrnoException, socket: import('node:stream').Duplex): void {
  const status =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? '431 Request Header Fields Too Large'
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? '408 Request Timeout'
        : '400 Bad Request';
  if (socket.writable && !(socket as import('node:net').Socket).destroyed)
    socket.end(`HTTP/1.1 ${status}\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`);
  else socket.destroy();
}

/** The listener's own answers use the contract's error envelope shape. */
function answerError(res: ServerResponse, statusCode: number, code: string, message: string, requestId: string): void {
  const body = JSON.stringify({
    error: { type: statusCode >= 500 ? 'api_error' : 'invalid_request_error', code, message, requestId },
  });
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(statusCode, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/** The message of one of the listener's own error answers, or the answer's text. */
function errorMessage(body: Buffer): string {
  const text = body.toString('utf8');
  try {
    return String((JSON.parse(text) as { error: { message: unknown } }).error.message);
  } catch {
    return text;
  }
}

/** `text`: the body decoded as UTF-8 (invalid bytes replaced). */
function parseEnvelope(text: string): Pick<Capture, 'envelope' | 'contractProblems'> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { envelope: null, contractProblems: [{ field: '(body)', message: 'the body is not JSON' }] };
  }
  const contractProblems = checkEnvelope(json);
  const value = (typeof json === 'object' && json !== null ? json : {}) as Record<string, unknown>;
  const string = (field: unknown) => (typeof field === 'string' ? field : null);
  const envelope =
    typeof value.id === 'string'
      ? {
          id: value.id,
          type: string(value.type),
          api_version: string(value.api_version),
          created: Number.isFinite(value.created) ? (value.created as number) : null,
        }
      : null;
  return { envelope, contractProblems };
}

/**
 * The listener: every request under the base path is read once as bytes, its signature checked,
 * captured on disk, then forwarded to the app (or answered here), and the app's answer goes back
 * to the sender.
 */
export class Listener {
  readonly #options: ListenerConfig;
  readonly #basePath: string;
  readonly #forwarder: Forwarder | null;
  /**
   * Requests not answered yet, counted rather than kept in a Set: a long-lived table of per-request
   * objects made V8 promote every request's objects (see PENDING in forward.ts).
   */
  #inFlight = 0;
  /** The request bodies held now (see maxBufferedBytes). */
  readonly #budget: ByteBudget;
  /** Whether the log has said that deliveries are being refused, since the budget was last empty. */
  #warnedBusy = false;
  /** Redirects already explained (see #adviseOnRedirect), by where they led: each is said once. */
  readonly #redirectsExplained = new Set<string>();
  /** Whether the app's refusal of a validly signed delivery has been explained (see #adviseOnSecret). */
  #secretAdvised = false;
  /** Whether a POST outside --path has been explained: the first one is, once a run. */
  #outsidePathAdvised = false;
  #settled: (() => void) | null = null;
  /** While held (see ListenerOptions.held): resolves true at release, false when closed first. */
  #gate: Promise<boolean> | null = null;
  #openGate: ((released: boolean) => void) | null = null;
  #waiting = 0;
  #server: Server | null = null;
  #secret: string | null;
  /** The command that prints `#secret` when it is the registered endpoint's, on file; null when it was given. */
  #secretPrintedBy: string | null = null;
  #closing: Promise<void> | undefined;
  url = '';
  port = 0;

  constructor(options: ListenerOptions) {
    const merged = {
      ...DEFAULTS,
      ...Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)),
    } as ListenerConfig;
    if (!Number.isInteger(merged.timeoutMs) || merged.timeoutMs < 1)
      throw new TypeError(`timeoutMs must be a positive integer (got ${merged.timeoutMs}).`);
    if (!Number.isFinite(merged.tolerance) || merged.tolerance < 0)
      throw new TypeError(`tolerance must be 0 or more seconds (got ${merged.tolerance}).`);
    if (!(merged.maxBufferedBytes >= merged.maxBodyBytes)) {
      throw new TypeError(
        `maxBufferedBytes (${merged.maxBufferedBytes}) must be at least maxBodyBytes (${merged.maxBodyBytes}): one delivery of the largest size must fit.`,
      );
    }
    this.#options = merged;
    this.#budget = new ByteBudget(merged.maxBufferedBytes);
    this.#basePath = normalizeBasePath(merged.path);
    this.#secret = merged.secret;
    this.#forwarder = merged.forwardTo ? new Forwarder(merged.forwardTo, merged.timeoutMs) : null;
    if (merged.held) this.#gate = new Promise((resolve) => (this.#openGate = resolve));
  }

  /** Lets the requests held so far go on, checked with the secret known now, and holds no more. */
  release(): void {
    this.#openGate?.(true);
    this.#openGate = null;
    this.#gate = null;
  }

  /** Requests held until `release()`. */
  get waiting(): number {
    return this.#waiting;
  }

  /**
   * The secret signatures are checked with (known once the endpoint is registered); `printedBy`, the
   * command that prints it when it is the registered endpoint's (`npx clockhook secret`), not one the user gave.
   */
  setSecret(secret: string | null, { printedBy = null }: { printedBy?: string | null } = {}): void {
    this.#secret = secret;
    this.#secretPrintedBy = printedBy;
  }

  get hasSecret(): boolean {
    return this.#secret !== null;
  }

  /** Starts listening; rejects with the server error (EADDRINUSE…) when the port cannot be had. */
  async start(): Promise<void> {
    const { requestTimeoutMs } = this.#options;
    // Node 20 reads these only from the createServer options; setting them later has no effect.
    const server = createServer(
      {
        headersTimeout: requestTimeoutMs,
        requestTimeout: requestTimeoutMs,
        keepAliveTimeout: 5_000,
        // How often Node looks for requests past those limits (30 s by default): a slowloris
        // connection is dropped soon after its limit, not up to 30 s later.
        connectionsCheckingInterval: Math.min(30_000, Math.max(100, Math.floor(requestTimeoutMs / 4))),
      },
      (req, res) => this.#run(req, res, (take) => readBody(req, this.#options.maxBodyBytes, take)),
    );
    server.on('clientError', answerClientError);
    await listenOn(server, this.#options.port, this.#options.host);
    this.#server = server;
    const { port } = server.address() as AddressInfo;
    this.port = port;
    const host = this.#options.host.includes(':') ? `[${this.#options.host}]` : this.#options.host;
    const displayHost = isEveryInterface(this.#options.host) ? '127.0.0.1' : host;
    this.url = `http://${displayHost}:${port}${this.#basePath === '/' ? '/' : this.#basePath}`;
  }

  /**
   * Sends a captured request to the app again through the same path as a delivery, recorded as a
   * new capture with `source: "replay"` and `replayOf`.
   */
  async replay({ captureId, mode, body }: ReplayRequest): Promise<ReplayResult> {
    const original = this.#options.store.get(captureId);
    if (!original)
      throw new ReplayError(
        'capture_not_found',
        `No capture ${captureId}: it was cleared or rotated out (--max-captures).`,
      );
    if (!this.#forwarder)
      throw new ReplayError('no_forward_target', 'Nothing to replay to: start listen with --forward-to <your app>.');
    if (mode === 'asis' && body !== undefined)
      throw new ReplayError(
        'asis_with_edit',
        'An edited body cannot be sent as-is: its old signature would not match. Use resign.',
      );
    const bytes = body === undefined ? await this.#storedBody(original) : Buffer.from(body, 'utf8');
    const headers: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(original.headers))
      if (!HOP_BY_HOP.has(name) && name !== 'content-length') headers[name] = value;
    if (mode === 'resign') {
      if (!this.#secret)
        throw new ReplayError(
          'no_secret',
          'No endpoint secret is known, so the body cannot be re-signed. Pass --secret, or use "Replay as-is".',
        );
      headers['x-service-signature'] = signPayload({
        payload: bytes,
        secret: this.#secret,
        timestamp: Math.floor(this.#options.now() / 1000),
      });
    }
    if (this.#closing)
      throw new ReplayError('listener_closing', 'clockhook is shutting down; the replay was not sent.');
    const started = performance.now();
    const { req, res, answer } = directExchange({ method: original.method, path: original.path, headers, body: bytes });
    this.#run(req, res, async (take) => wholeBody(bytes, this.#options.maxBodyBytes, take), captureId);
    const { status, headers: answered, body: said } = await answer;
    const replayId = answered[CAPTURE_HEADER];
    // Not captured: the listener refused it before (a path outside --path after a restart, say).
    if (typeof replayId !== 'string')
      throw new ReplayError('replay_failed', `The replay was refused with ${status}: ${errorMessage(said)}`);
    return { captureId: replayId, statusCode: status, durationMs: Math.round(performance.now() - started) };
  }

  async #storedBody(capture: Capture): Promise<Buffer> {
    try {
      return await this.#options.store.body(capture);
    } catch (error) {
      throw new ReplayError('body_unavailable', `${(error as Error).message} Nothing was replayed.`);
    }
  }

  /** Stops accepting, lets in-flight requests finish (at most `graceMs`), then closes. Safe to call twice. */
  close(graceMs = 5_000): Promise<void> {
    this.#openGate?.(false);
    this.#openGate = null;
    this.#closing ??= (async () => {
      const server = this.#server;
      if (server) {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        const grace = new Promise<void>((resolve) => setTimeout(resolve, graceMs).unref());
        const settled = new Promise<void>((resolve) => {
          if (this.#inFlight === 0) resolve();
          else this.#settled = resolve;
        });
        await Promise.race([settled, grace]);
        server.closeAllConnections();
        await closed;
      }
      this.#forwarder?.close();
    })();
    return this.#closing;
  }

  /**
   * A request handed over inside this process (by the relay client): it takes the same path as a
   * delivery over HTTP, without a loopback HTTP hop, and resolves with what the sender is to get.
   */
  handleDirect(request: DirectRequest): Promise<DirectAnswer> {
    const { req, res, answer } = directExchange(request);
    if (this.#closing || !this.#server) {
      answerError(res, 503, 'listener_closing', 'clockhook is shutting down; retry later.', newCaptureId());
      return answer;
    }
    this.#run(req, res, async (take) => wholeBody(request.body, this.#options.maxBodyBytes, take));
    return answer;
  }

  /**
   * Handles one request, keeping track of it until it is answered (close waits for those).
   * `replayOf`: the capture a replay repeats (replays are handed over by `replay`, never over HTTP).
   */
  #run(req: IncomingMessage, res: ServerResponse, read: Read, replayOf?: string): void {
    // The request's body counts against the budget until the request is answered and done with.
    const lease = leaseFrom(this.#budget);
    const task = this.#handle(req, res, () => read(lease.take), replayOf).catch((error) => {
      this.#options.logger.error(
        `listener: unexpected failure on ${req.method} ${req.url}: ${error instanceof Error ? error.stack : error}`,
      );
      answerError(res, 500, 'internal_error', 'clockhook failed unexpectedly; see its log.', newCaptureId());
    });
    this.#inFlight += 1;
    void task.finally(() => {
      lease.giveBack();
      if (this.#budget.held === 0) this.#warnedBusy = false;
      this.#inFlight -= 1;
      if (this.#inFlight === 0) this.#settled?.();
    });
  }

  #checkSignature(req: IncomingMessage, bytes: Buffer): CaptureSignature {
    const header = req.headers['x-service-signature'];
    if (this.#secret === null) return { status: 'unchecked' };
    const result = verifySignature({
      header,
      payload: bytes,
      secret: this.#secret,
      tolerance: this.#options.tolerance,
      now: this.#options.now,
    });
    const nowSeconds = this.#options.now() / 1000;
    const timestamp = result.timestamp;
    const age = timestamp === undefined ? {} : { timestamp, ageSeconds: Math.round(nowSeconds - timestamp) };
    if (result.ok) return { status: 'valid', ...age };
    return {
      status: result.reason === 'missing_header' ? 'missing' : 'invalid',
      reason: result.reason,
      hint: result.hint,
      ...age,
    };
  }

  /** The capture of a request read whole: its signature and envelope checked, and whether the listener refuses to forward it. */
  #received(req: IncomingMessage, body: Body, replayOf: string | undefined): Capture {
    const signature = this.#checkSignature(req, body.bytes);
    const stored = encodeBody(body.bytes);
    // A UTF-8 body is decoded once, for the capture and for the envelope check.
    const parsed = parseEnvelope(stored.bodyEncoding === 'utf8' ? stored.body : body.bytes.toString('utf8'));
    const firstId = parsed.envelope ? this.#options.store.firstWithEventId(parsed.envelope.id) : undefined;
    let rejected: Capture['rejected'] = null;
    if (body.truncated) rejected = { statusCode: 413, code: 'payload_too_large' };
    else if (
      replayOf === undefined &&
      !this.#options.skipVerify &&
      (signature.status === 'invalid' || signature.status === 'missing')
    ) {
      // A public tunnel must not be an open door to localhost.
      rejected = { statusCode: 400, code: signature.status === 'missing' ? 'signature_missing' : 'signature_invalid' };
    }
    return {
      id: newCaptureId(this.#options.now()),
      receivedAt: new Date(this.#options.now()).toISOString(),
      source: replayOf === undefined ? 'delivery' : 'replay',
      ...(replayOf === undefined ? {} : { replayOf }),
      method: req.method ?? 'GET',
      path: req.url ?? '/',
      headers: copyHeaders(req),
      ...stored,
      bodySize: body.size,
      ...(body.truncated ? { bodyTruncated: true } : {}),
      signature,
      ...parsed,
      duplicateOf: replayOf === undefined ? (firstId ?? null) : null,
      rejected,
      ...(rejected === null && this.#forwarder === null ? { forward: null } : {}),
    };
  }

  /** Why the listener answered a rejected capture itself. */
  #rejection(capture: Capture): string {
    if (capture.bodyTruncated) {
      const limit = this.#options.maxBodyBytes;
      return `The body is ${capture.bodySize} bytes; clockhook accepts at most ${limit}. The first ${limit} bytes are captured.`;
    }
    const { status, reason, hint } = capture.signature;
    return `Signature ${status}${reason ? ` (${reason})` : ''}: not forwarded. ${hint ?? ''} Use --skip-verify to forward anyway.`.trim();
  }

  /** `read`: the raw body (read from the socket, or handed over whole). */
  async #handle(
    req: IncomingMessage,
    res: ServerResponse,
    read: () => Promise<Body | 'busy'>,
    replayOf: string | undefined,
  ): Promise<void> {
    const started = performance.now();
    const requestPath = req.url ?? '/';
    const relative = pathUnderBase(requestPath, this.#basePath);
    if (relative === null) {
      answerError(
        res,
        404,
        'not_found',
        `clockhook listens for deliveries under ${this.#basePath}; ${requestPath.split('?')[0]} is outside it.`,
        newCaptureId(),
      );
      req.resume();
      if (req.method === 'POST') this.#adviseOnPath(requestPath.split('?')[0]);
      return;
    }
    if (req.method !== 'POST') {
      // The service only ever POSTs; anything else is a browser or a scanner, not a delivery.
      res.setHeader('allow', 'POST');
      answerError(
        res,
        405,
        'method_not_allowed',
        `Webhook deliveries are POSTs; ${req.method} is not captured.`,
        newCaptureId(),
      );
      req.resume();
      return;
    }
    const body = await read();
    if (body === 'busy') {
      this.#refuseBusy(req, res, started, replayOf);
      return;
    }
    const gate = this.#gate;
    if (gate) {
      this.#waiting += 1;
      const released = await gate;
      this.#waiting -= 1;
      if (!released) {
        // Stopped before it was ready: nothing was checked or kept, so the sender must send it again.
        res.setHeader('retry-after', '10');
        answerError(
          res,
          503,
          'listener_closing',
          'clockhook stopped before it was ready; retry later.',
          newCaptureId(),
        );
        return;
      }
    }
    const store = this.#options.store;
    // From here on only the capture as stored is kept: for a large body, its beginning, not the
    // whole decoded text (the raw bytes are held until the app has them).
    const { written, durable, capture } = store.insert(this.#received(req, body, replayOf), body.bytes);
    const rejected = capture.rejected;
    if (replayOf !== undefined) res.setHeader(CAPTURE_HEADER, capture.id);
    const failedToStore = (error: Error) => {
      // Not on disk: the service must retry, so say 503 (and forward nothing that is not written).
      this.#options.logger.error(
        `Could not write the capture to ${store.path}: ${error.message}. Answering 503 so the service retries.`,
      );
      answerError(
        res,
        503,
        'capture_failed',
        'clockhook could not store this delivery (disk full or read-only?); retry later.',
        capture.id,
      );
      this.#report(capture, 503, started, 'capture_failed');
    };
    /** Waits for a step of the write; false (the sender told 503) when it failed. */
    const reached = (step: Promise<void>) =>
      step.then(
        () => true,
        (error: Error) => {
          failedToStore(error);
          return false;
        },
      );
    if (!(await reached(written))) return;

    // From here on every answer to the sender waits for `durable`: it is told "received" only once
    // the capture is on the disk. The app need not wait for the fsync, so the forward starts now.
    if (rejected || !this.#forwarder) {
      if (!(await reached(durable))) return;
      if (rejected) {
        // The rest of an oversized body is never read: close the connection behind the answer.
        if (body.truncated) res.setHeader('connection', 'close');
        answerError(res, rejected.statusCode, rejected.code, this.#rejection(capture), capture.id);
        this.#report(capture, rejected.statusCode, started, rejected.code);
      } else {
        const text = JSON.stringify({ received: true, captureId: capture.id });
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
        res.end(text);
        this.#report(capture, 200, started);
      }
      return;
    }

    const outcome = await this.#forwarder.forward(
      req,
      res,
      body.bytes,
      joinTargetPath(this.#forwarder.target, relative),
      durable,
    );
    await store.update(capture.id, { forward: outcome.forward }, { lazy: true });
    if (outcome.kind === 'unstored') {
      failedToStore(outcome.error);
      return;
    }
    if (outcome.kind === 'failed') {
      if (!(await reached(durable))) return;
      answerError(res, outcome.statusCode, outcome.code, outcome.message, capture.id);
    }
    const status = outcome.kind === 'failed' ? outcome.statusCode : (outcome.forward.statusCode ?? 502);
    const answer =
      outcome.kind === 'answered' && (status < 200 || status >= 300) ? answerExcerpt(outcome.forward) : null;
    this.#report(capture, status, started, outcome.forward.error, outcome.forward.target, answer);
    if (status >= 300 && status < 400) this.#adviseOnRedirect(outcome.forward, relative);
    if (capture.signature.status === 'valid' && isSignatureRefusal(status)) this.#adviseOnSecret(status);
  }

  /**
   * The app refusing as unauthorized (400, 401, 403) a delivery whose signature clockhook verified is most
   * often an app verifying with another secret: an old one, or another endpoint's. Said once a run, with
   * the end of the right one to compare, since the app's answer alone reads like a forged delivery.
   */
  #adviseOnSecret(status: number): void {
    if (this.#secretAdvised || this.#secret === null) return;
    this.#secretAdvised = true;
    this.#options.logger.warn(
      `The app answered ${status} to a delivery whose signature is valid. If it checks signatures, it may verify with another secret than clockhook, which used ${maskSecret(this.#secret)} (${this.#secretPrintedBy ? `"${this.#secretPrintedBy}" prints it whole` : 'the one given to listen with --secret or $CLOCKHOOK_SECRET'}).`,
    );
  }

  /**
   * A request outside --path is answered 404 and not captured, so a service that delivers to the wrong
   * path (an endpoint URL without it, a --path mistyped) would meet silence at the terminal: the first
   * POST there is explained, once a run (anything on the internet may POST anywhere, so not each path).
   */
  #adviseOnPath(path: string): void {
    if (this.#outsidePathAdvised) return;
    this.#outsidePathAdvised = true;
    this.#options.logger.warn(
      `A POST to ${path} was answered 404 and not captured: listen takes deliveries under ${this.#basePath} only (--path). If the service sends them there, register its endpoint with the path ${this.#basePath}, or give listen the --path of that URL. Further requests outside ${this.#basePath} are not reported.`,
    );
  }

  /**
   * An app that redirects a delivery (a framework adding a trailing slash, http → https) fails every
   * one of them: the service does not follow redirects and counts a non-2xx answer as a failed attempt,
   * so the endpoint ends up disabled. The line shows only the status; this says why and what to change,
   * once per place it redirects to.
   */
  #adviseOnRedirect(forward: CaptureForward, relative: string): void {
    const location = forward.headers.location;
    if (typeof location !== 'string' || !URL.canParse(location, forward.target) || this.#redirectsExplained.size >= 100)
      return;
    const to = new URL(location, forward.target);
    if (this.#redirectsExplained.has(to.href)) return;
    this.#redirectsExplained.add(to.href);
    const fix =
      relative === '/' && to.search === '' && to.hash === ''
        ? `Forward to where it leads instead: --forward-to ${to.href}`
        : `Make the app answer ${forward.target} itself.`;
    this.#options.logger.warn(
      `The app answered ${forward.statusCode} to POST ${forward.target}, redirecting to ${to.href}. The service does not follow redirects: it counts each such delivery as failed and retries it. ${fix}`,
    );
  }

  /**
   * The bodies held already fill the budget: say 503 at once (the service retries on its schedule)
   * and close the connection, since the rest of the body is not read. Nothing is captured.
   */
  #refuseBusy(req: IncomingMessage, res: ServerResponse, started: number, replayOf: string | undefined): void {
    const budget = formatMiB(this.#options.maxBufferedBytes);
    if (!this.#warnedBusy) {
      this.#warnedBusy = true;
      this.#options.logger.warn(
        `Bodies of requests in flight fill the listener's budget (--max-buffer, ${budget}): further deliveries are answered 503 until some are answered; the service retries them. Raise --max-buffer if this machine has the memory.`,
      );
    }
    res.setHeader('connection', 'close');
    res.setHeader('retry-after', '10');
    answerError(
      res,
      503,
      'listener_busy',
      `clockhook holds as many request bodies as it may (${budget}, --max-buffer); retry later.`,
      newCaptureId(),
    );
    this.#options.onDelivery({
      captureId: null,
      source: replayOf === undefined ? 'delivery' : 'replay',
      eventId: null,
      type: null,
      signature: 'unchecked',
      duplicateOf: null,
      method: req.method ?? 'POST',
      target: null,
      status: 503,
      durationMs: Math.round(performance.now() - started),
      error: 'listener_busy',
    });
  }

  /** `target`: where the request went, for a forwarded one; the listener answered the others itself. */
  #report(
    capture: Capture,
    status: number,
    started: number,
    error?: string,
    target: string | null = null,
    answer: string | null = null,
  ): void {
    this.#options.onDelivery({
      captureId: capture.id,
      source: capture.source,
      eventId: capture.envelope?.id ?? null,
      // `||`: a body whose type is "" names no type either.
      type: capture.envelope?.type || null,
      signature: capture.signature.status,
      ...(capture.signature.reason ? { signatureReason: capture.signature.reason } : {}),
      duplicateOf: capture.duplicateOf,
      method: capture.method,
      target,
      status,
      durationMs: Math.round(performance.now() - started),
      ...(error ? { error } : {}),
      ...(answer ? { answer } : {}),
    });
  }
}
