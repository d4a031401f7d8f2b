import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ActionError } from '../errors.js';
import { formatMiB } from '../size.js';
import {
  answerClientError,
  answerError,
  ByteBudget,
  errorMessage,
  hardenedServerOptions,
  leaseFrom,
} from '../http/index.js';
import { isEveryInterface, listenOn } from '../http/index.js';
import { type Capture, newCaptureId } from '../store/index.js';
import type { AppStateEvent } from './app-wait.js';
import type { StoryBook } from '../story/index.js';
import { Advisor } from './advice.js';
import { type Delivered, type DirectAnswer, type DirectRequest, directExchange } from './direct.js';
import { type ForwardRoute, isRouted, type Route } from './routes.js';
import { parseFilters } from './filters.js';
import { Forwarder } from './forward.js';
import { Hold } from './hold.js';
import { Injector } from './injector.js';
import { deliveryOf, type ListenerParts, runDelivery } from './passes.js';
import { type Read, readFromSocket, wholeBody } from './read.js';
import { Reporter } from './report.js';
import { ShapeBook } from './shapes.js';
import { type ListenerConfig, listenerConfig, type ListenerOptions } from './options.js';
import {
  replayable,
  replayBody,
  type Replaying,
  type ReplayRequest,
  type ReplayResult,
  replayRequest,
  replayResult,
} from './replay.js';
import { normalizeBasePath } from './target.js';

/** The listener's routes: one per route given, or none (capture-only). */
function routesOf(config: {
  routes: readonly ForwardRoute[];
  timeoutMs: number;
  waitForAppMs: number;
  onAppState: (event: AppStateEvent) => void;
}): Route[] {
  return config.routes.map(({ types, target, filters = [] }) => ({
    name: types === null ? target.href : `${types.join(',')}=${target.href}`,
    types,
    forwarder: new Forwarder(target, config.timeoutMs, config),
    filters: parseFilters(filters),
  }));
}

/**
 * The listener: every request under the base path goes through the same steps (passes.ts), each a function of
 * its own: route (path and method), read (the raw bytes under the byte budget), hold (until listen is ready),
 * verify and capture, store (durable before anything is sent on), answer (the listener's own) or forward (to
 * the app, with http-proxy, its answer back to the sender); then one finish records and reports it.
 */
export class Listener {
  readonly #options: ListenerConfig;
  readonly #basePath: string;
  /** Where deliveries go: one route per --forward-to (none: capture-only). */
  readonly #routes: Route[];
  /** Requests not answered yet, counted rather than kept (see docs/performance-notes.md). */
  #inFlight = 0;
  /** The request bodies held now (see maxBufferedBytes). */
  readonly #budget: ByteBudget;
  readonly #advisor: Advisor;
  readonly #hold: Hold;
  /** Faults on purpose (--faults): what they are, and what was injected; null without. */
  readonly injector: Injector | null;
  /** What a delivery's steps use of the listener, made once. */
  readonly #parts: ListenerParts;
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
    this.#advisor = new Advisor(config.logger, this.#basePath, config.tolerance);
    this.#hold = new Hold(config.held);
    this.injector = config.faults ? new Injector(config.faults, config.logger) : null;
    this.#parts = {
      config,
      basePath: this.#basePath,
      routes: this.#routes,
      filters: parseFilters(config.filters),
      filtering: config.filters.length > 0 || this.#routes.some((route) => route.filters.length > 0),
      routed: isRouted(config.routes),
      advisor: this.#advisor,
      hold: this.#hold,
      injector: this.injector,
      reporter: new Reporter(config.store, config.stories, config.onDelivery),
      shapes: new ShapeBook(
        () => config.store.all(),
        (line) => config.logger.warn(line),
      ),
      secret: () => this.#secret,
      deliver: (request, replay) => this.deliver(request, replay),
    };
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
      void this.#serve(req, res, (lease) => readFromSocket(req, maxBodyBytes, lease));
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
    const capture = await this.#serve(req, res, async (lease) => wholeBody(request.body, limit, lease), replay);
    return { capture, answer: await answer };
  }

  /** How long a delivery waits for an app that is not answering (`--wait-for-app`), in ms. */
  get waitForAppMs(): number {
    return this.#options.waitForAppMs;
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
    // Over what a delivery may be, listen would refuse it itself (413): said now, naming the bound.
    if (bytes.length > this.#options.maxBodyBytes)
      throw new ActionError(
        'body_too_large',
        `The body is ${formatMiB(bytes.length)}, over the ${formatMiB(this.#options.maxBodyBytes)} listen takes in one delivery; nothing was replayed.`,
      );
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
    // Its record (answer and judgement) is on the disk before its result is returned: a reader in another
    // process (captures show, an MCP tool) finds it answered, never still pending.
    await store.sync();
    const replayed = store.get(capture.id) ?? capture;
    return replayResult(replayed, answer, performance.now() - started, this.stories.captureStory(replayed));
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
  async #serve(req: IncomingMessage, res: ServerResponse, read: Read, replay: Replaying = {}): Promise<Capture | null> {
    // The request's body counts against the budget until the request is answered and done with.
    const lease = leaseFrom(this.#budget);
    this.#inFlight += 1;
    try {
      return await runDelivery(
        deliveryOf(req, res, () => read(lease), replay),
        this.#parts,
      );
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
}
