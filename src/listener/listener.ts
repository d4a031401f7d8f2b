import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ActionError } from '../errors.js';
import {
  answerClientError,
  answerError,
  ByteBudget,
  errorMessage,
  hardenedServerOptions,
  leaseFrom,
} from '../http/index.js';
import { answerExcerpt } from '../excerpt.js';
import { isEveryInterface, listenOn } from '../net.js';
import { type Capture, newCaptureId } from '../store/index.js';
import type { StoryBook } from '../story/index.js';
import { Advisor } from './advice.js';
import { answerItself, answerUnstored, refuseBusy, routeRequest } from './steps.js';
import { type Body, captureOf } from './capture.js';
import { type Delivered, type DirectAnswer, type DirectRequest, directExchange } from './direct.js';
import type { Forwarder } from './forward.js';
import { chooseRoute, isRouted, type Route, routeOfCapture, routesOf } from './routes.js';
import { Hold } from './hold.js';
import type { FaultPlan } from './faults.js';
import { Injector } from './injector.js';
import type { DeliveryTrace } from './tracing.js';
import { type Read, readFromSocket, wholeBody } from './read.js';
import { Reporter } from './report.js';
import { type ListenerConfig, listenerConfig, type ListenerOptions } from './options.js';
import {
  replayable,
  replayBody,
  type Replaying,
  type ReplayRequest,
  type ReplayResult,
  replayRequest,
} from './replay.js';
import { joinTargetPath, normalizeBasePath } from './target.js';
import { verifyDelivery } from './verify.js';
import { isTaken } from '../contract/index.js';

/**
 * The listener: every request under the base path goes through the same steps, each a function of its
 * own: route (path and method), read (the raw bytes under the byte budget), verify (the signature),
 * capture (stored before anything is sent on), forward (to the app, with http-proxy) and answer (the
 * app's answer, or the listener's own, goes back to the sender once the capture is durable).
 */
export class Listener {
  readonly #options: ListenerConfig;
  readonly #basePath: string;
  /** Where deliveries go: one route per --forward-to (none: capture-only). */
  readonly #routes: Route[];
  /** Whether the routes are by event type (`TYPES=TARGET`, or several): captures then record their route. */
  readonly #routed: boolean;
  /** Requests not answered yet, counted rather than kept (see docs/performance.md). */
  #inFlight = 0;
  /** The request bodies held now (see maxBufferedBytes). */
  readonly #budget: ByteBudget;
  readonly #advisor: Advisor;
  readonly #hold: Hold;
  /** Faults on purpose (--faults): what they are, and what was injected; null without. */
  readonly injector: Injector | null;
  readonly #reporter: Reporter;
  /** The fault plans of captures on their way from capture to forward, by capture id. */
  readonly #plans = new Map<string, FaultPlan>();
  #settled: (() => void) | null = null;
  #server: Server | null = null;
  #secret: string | null;
  #closing: Promise<void> | undefined;
  url = '';
  port = 0;

  constructor(options: ListenerOptions) {
    const config = listenerConfig(options);
    this.#options = config;
    this.#budget = new ByteBudget(config.maxBufferedBytes);
    this.#basePath = normalizeBasePath(config.path);
    this.#secret = config.secret;
    this.#routes = routesOf(config);
    this.#routed = isRouted(config.routes);
    this.#advisor = new Advisor(config.logger, this.#basePath, config.tolerance);
    this.#hold = new Hold(config.held);
    this.injector = config.faults ? new Injector(config.faults, config.logger) : null;
    this.#reporter = new Reporter(config.store, config.stories, config.onDelivery);
  }

  /** The stories of the store's events, kept as captures come (the page reads the same ones). */
  get stories(): StoryBook {
    return this.#options.stories;
  }

  /** Lets the requests held so far go on, checked with the secret known now, and holds no more. */
  release(): void {
    this.#hold.release();
  }

  /** Requests held until `release()`. */
  get waiting(): number {
    return this.#hold.waiting;
  }

  /**
   * The secret signatures are checked with (known once the endpoint is registered); `printedBy`, the
   * command that prints it when it is the registered endpoint's (`npx clockhook secret`), not one the user gave.
   */
  setSecret(secret: string | null, { printedBy = null }: { printedBy?: string | null } = {}): void {
    this.#secret = secret;
    this.#advisor.setSecret(secret, printedBy);
  }

  get hasSecret(): boolean {
    return this.#secret !== null;
  }

  /** Starts listening; rejects with the server error (EADDRINUSE…) when the port cannot be had. */
  async start(): Promise<void> {
    const { maxBodyBytes, requestTimeoutMs, host } = this.#options;
    const server = createServer(hardenedServerOptions(requestTimeoutMs), (req, res) => {
      void this.#run(req, res, (lease) => readFromSocket(req, maxBodyBytes, lease));
    });
    server.on('clientError', answerClientError);
    await listenOn(server, this.#options.port, host);
    this.#server = server;
    this.port = (server.address() as AddressInfo).port;
    const shownHost = isEveryInterface(host) ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
    this.url = `http://${shownHost}:${this.port}${this.#basePath}`;
  }

  /**
   * A request handed over inside this process (by the relay client, or a replay with `replayOf`): it
   * takes the same steps as a delivery over HTTP, without a loopback HTTP hop, and resolves with the
   * capture made and what the sender is to get.
   */
  async deliver(request: DirectRequest, replay: Replaying = {}): Promise<Delivered> {
    const { req, res, answer } = directExchange(request);
    if (this.#closing || !this.#server) {
      answerError(res, 503, 'listener_closing', 'clockhook is shutting down; retry later.', {
        requestId: newCaptureId(),
      });
      return { capture: null, answer: await answer };
    }
    const limit = this.#options.maxBodyBytes;
    const capture = await this.#run(req, res, async (lease) => wholeBody(request.body, limit, lease), replay);
    return { capture, answer: await answer };
  }

  /** A request handed over by the relay client: what its sender is to get. */
  async handleDirect(request: DirectRequest): Promise<DirectAnswer> {
    return (await this.deliver(request)).answer;
  }

  /**
   * Sends a captured request to the app again through the same steps as a delivery, recorded as a new
   * capture with `source: "replay"` and `replayOf`.
   */
  async replay(asked: ReplayRequest): Promise<ReplayResult> {
    const { store, now } = this.#options;
    const original = replayable(store.get(asked.captureId), asked, this.#routes.length > 0);
    const { bytes, edited } = await replayBody(store, original, asked.body);
    const request = replayRequest(original, bytes, { mode: asked.mode, secret: this.#secret, now: now() });
    if (this.#closing)
      throw new ActionError('listener_closing', 'clockhook is shutting down; the replay was not sent.');
    const started = performance.now();
    const { capture, answer } = await this.deliver(request, { replayOf: original.id, edited });
    // Not captured: the listener refused it before (a path outside --path after a restart, say).
    if (!capture)
      throw new ActionError(
        'replay_failed',
        `The replay was refused with ${answer.status}: ${errorMessage(answer.body)}`,
      );
    return { captureId: capture.id, statusCode: answer.status, durationMs: Math.round(performance.now() - started) };
  }

  /** Stops accepting, lets in-flight requests finish (at most `graceMs`), then closes. Safe to call twice. */
  close(graceMs = 5_000): Promise<void> {
    this.#hold.refuse();
    this.#closing ??= (async () => {
      const server = this.#server;
      for (const route of this.#routes) route.forwarder.stopWaiting();
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
      for (const route of this.#routes) route.forwarder.close();
    })();
    return this.#closing;
  }

  /**
   * Handles one request, keeping track of it until it is answered (close waits for those); resolves with
   * its capture, or null when none was made. `replayOf`: the capture a replay repeats.
   */
  async #run(req: IncomingMessage, res: ServerResponse, read: Read, replay: Replaying = {}): Promise<Capture | null> {
    // The request's body counts against the budget until the request is answered and done with.
    const lease = leaseFrom(this.#budget);
    this.#inFlight += 1;
    try {
      return await this.#handle(req, res, () => read(lease), replay);
    } catch (error) {
      const detail = error instanceof Error ? error.stack : error;
      this.#options.logger.error(`listener: unexpected failure on ${req.method} ${req.url}: ${detail}`);
      answerError(res, 500, 'internal_error', 'clockhook failed unexpectedly; see its log.', {
        requestId: newCaptureId(),
      });
      return null;
    } finally {
      lease.giveBack();
      if (this.#budget.held === 0) this.#advisor.budgetEmpty();
      this.#inFlight -= 1;
      if (this.#inFlight === 0) this.#settled?.();
    }
  }

  /** The steps of one request, in order; see the class's comment. */
  async #handle(
    req: IncomingMessage,
    res: ServerResponse,
    read: () => Promise<Body | 'busy'>,
    replay: Replaying,
  ): Promise<Capture | null> {
    const started = performance.now();
    const relative = routeRequest(req, res, this.#basePath, this.#advisor);
    if (relative === null) return null;
    // With tracing on, the request's server span; a replay's links to its original delivery's.
    const { tracer, store } = this.#options;
    const linkTo = tracer && replay.replayOf ? store.get(replay.replayOf)?.trace : undefined;
    const trace = tracer?.start(req.headers, { method: req.method ?? 'POST', path: this.#basePath, linkTo }) ?? null;
    const body = await read();
    if (body === 'busy') {
      trace?.end(503, { 'error.type': 'listener_busy' });
      refuseBusy(
        req,
        res,
        { advisor: this.#advisor, maxBufferedBytes: this.#options.maxBufferedBytes, started },
        (report) =>
          this.#options.onDelivery({ ...report, source: replay.replayOf === undefined ? 'delivery' : 'replay' }),
      );
      return null;
    }
    if (!(await this.#hold.pass())) {
      trace?.end(503, { 'error.type': 'listener_closing' });
      // Stopped before it was ready: nothing was checked or kept, so the sender must send it again.
      answerError(res, 503, 'listener_closing', 'clockhook stopped before it was ready; retry later.', {
        requestId: newCaptureId(),
        headers: { 'retry-after': '10' },
      });
      return null;
    }
    // From here on only the capture as stored is kept (no variable holds the one made): for a large body,
    // its beginning, not the whole decoded text (the raw bytes are held until the app has them).
    // Nothing goes to the app, and the sender is told nothing, before the capture is on the disk (fsynced): a
    // capture that cannot be kept is answered 503 and never forwarded, so the app never handles a delivery
    // that the sender is then told failed (and sends again).
    const { stored, kept } = await this.#keep(req, res, body, { replay, trace, started });
    if (!kept) return stored;
    const route = routeOfCapture(this.#routes, this.#routed, stored);
    const plan = this.#plans.get(stored.id);
    this.#plans.delete(stored.id);
    if (stored.rejected || !route) {
      const status = answerItself(res, stored, this.#options.maxBodyBytes);
      this.#reporter.report(stored, { status, started, error: stored.rejected?.code });
    } else {
      const exchange = { req, res, capture: stored, bytes: body.bytes, relative, started, plan, trace };
      await this.#forward(route.forwarder, exchange);
    }
    return stored;
  }

  /** Steps "verify" and "capture" (spans of their own, with tracing on): the capture as stored, and whether it is on the disk. */
  async #keep(
    req: IncomingMessage,
    res: ServerResponse,
    body: Body,
    { replay, trace, started }: { replay: Replaying; trace: DeliveryTrace | null; started: number },
  ): Promise<{ stored: Capture; kept: boolean }> {
    const verified = trace?.step('verify');
    const made = this.#capture(req, body, replay);
    verified?.({ 'clockhook.signature': made.signature.status });
    const captured = trace?.step('capture', { 'clockhook.capture.id': made.id });
    if (trace) this.#reporter.traced(made.id, trace);
    const { durable, capture: stored } = this.#options.store.insert(
      trace ? { ...made, trace: trace.ref } : made,
      body.bytes,
    );
    const kept = await this.#reached(durable, res, stored, started);
    captured?.(kept ? {} : { 'error.type': 'capture_failed' });
    return { stored, kept };
  }

  /** Steps "verify" and "capture": the capture of a request read whole. */
  #capture(req: IncomingMessage, body: Body, { replayOf, edited, injected }: Replaying): Capture {
    const { stories, tolerance, now, skipVerify } = this.#options;
    const header = req.headers['x-service-signature'];
    const signature = verifyDelivery(header, body.bytes, { secret: this.#secret, tolerance, now });
    const capture = captureOf(req, body, {
      signature,
      replayOf,
      edited,
      decide: (arriving, edited) => stories.decide(arriving, { edited }),
      refuseUnsigned: !skipVerify,
      routeFor: (type) => (this.#routed ? (chooseRoute(this.#routes, type)?.name ?? null) : undefined),
      forwarding: this.#routes.length > 0,
      now: now(),
    });
    if (injected) return { ...capture, injected };
    if (!this.injector) return capture;
    const decided = this.injector.decide(capture);
    if (decided.plan) this.#plans.set(capture.id, decided.plan);
    return decided.capture;
  }

  /** Waits for a step of the capture's write; false, once the sender is told 503, when it failed. */
  async #reached(step: Promise<void>, res: ServerResponse, capture: Capture, started: number): Promise<boolean> {
    try {
      await step;
      return true;
    } catch (error) {
      answerUnstored(res, capture, error as Error, this.#options);
      this.#reporter.report(capture, { status: 503, started, error: 'capture_failed' });
      return false;
    }
  }

  /** Steps "forward" and "answer" (the capture is durable): the exact bytes go to the app, its answer to the sender. */
  async #forward(forwarder: Forwarder, exchange: Exchange): Promise<void> {
    const { req, res, capture, bytes, relative, started, plan } = exchange;
    const injector = plan ? this.injector : null;
    const done = injector && plan ? await injector.before(plan) : () => {};
    const path = joinTargetPath(forwarder.target, relative);
    // Only with tracing on is a header added (its traceparent): off, the app gets the bytes and headers as sent.
    const span = exchange.trace?.forward(forwarder.urlFor(path));
    if (span) Object.assign(req.headers, span.headers);
    const outcome = await forwarder.forward(req, res, bytes, path, { keepAnswer: plan?.timeout }).finally(done);
    span?.end(outcome.forward.statusCode, outcome.forward.error);
    await this.#options.store.update(capture.id, { forward: outcome.forward }, { lazy: true });
    if (outcome.kind === 'failed')
      answerError(res, outcome.statusCode, outcome.code, outcome.message, { requestId: capture.id });
    const status = outcome.kind === 'failed' ? outcome.statusCode : (outcome.forward.statusCode ?? 502);
    const answer = outcome.kind === 'answered' && !isTaken(status) ? answerExcerpt(outcome.forward) : null;
    const held = plan?.timeout && outcome.kind === 'answered';
    const error = held ? 'injected timeout: the sender is not answered' : outcome.forward.error;
    this.#reporter.report(capture, { status, started, error, forward: outcome.forward, answer });
    this.#advisor.forwarded(outcome.forward, status, capture.signature, relative);
    if (plan?.duplicate && outcome.kind === 'answered')
      void injector?.duplicate(capture, bytes, { secret: this.#secret, now: this.#options.now() }, (request) =>
        this.deliver(request, { injected: ['duplicate'] }),
      );
    if (held) await injector?.holdAnswer(res);
  }
}

/** One forwarded request on its way (see #forward). */
interface Exchange {
  req: IncomingMessage;
  res: ServerResponse;
  capture: Capture;
  bytes: Buffer;
  relative: string;
  started: number;
  /** Its injected faults (--faults), if any. */
  plan?: FaultPlan;
  /** Its spans, with tracing on. */
  trace?: DeliveryTrace | null;
}
