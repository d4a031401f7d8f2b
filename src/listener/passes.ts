// A delivery's way through the listener, as http-proxy runs its web passes: one context per delivery (Delivery)
// and an ordered list of steps, run in a loop until one says it is done; then one finish that records the app's
// answer and reports the delivery, whichever step ended it. The tracing and faults that ride along (Aside) wrap
// steps from outside; the steps know neither.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { answerError } from '../http/index.js';
import type { Capture, CaptureForward, CaptureSignature } from '../store/index.js';
import { newCaptureId } from '../store/index.js';
import type { StoryBook } from '../story/index.js';
import type { Advisor } from './advice.js';
import { answerItself, answerUnstored, refuseBusy } from './answer.js';
import { Aside } from './aside.js';
import { type Body, captureOf } from './capture.js';
import type { DirectRequest } from './direct.js';
import { joinTargetPath } from './target.js';
import type { Hold } from './hold.js';
import type { Injector } from './injector.js';
import type { ListenerConfig } from './options.js';
import type { Replaying } from './replay.js';
import type { Reporter } from './report.js';
import { routeRequest } from './route.js';
import { chooseRoute, type Route, routeOfCapture } from './routes.js';
import { type DeliveryFilter, type FilterFacts, filteredBy } from './filters.js';
import type { ShapeBook } from './shapes.js';
import { storeCapture } from './store-capture.js';
import { verifyDelivery } from './verify.js';

/** What the steps use of the listener: made once, shared by every delivery. */
export interface ListenerParts {
  readonly config: ListenerConfig;
  readonly basePath: string;
  readonly routes: Route[];
  /** `--filter`: the rules a delivery must match to be forwarded. */
  readonly filters: readonly DeliveryFilter[];
  /** Whether listen or a route has filters. */
  readonly filtering: boolean;
  /** Whether the routes are by event type: captures then record their route. */
  readonly routed: boolean;
  readonly advisor: Advisor;
  readonly hold: Hold;
  readonly injector: Injector | null;
  readonly reporter: Reporter;
  readonly shapes: ShapeBook;
  /** The secret signatures are checked with now. */
  secret(): string | null;
  /** Hands a request to the listener inside this process (an injected duplicate). */
  deliver(request: DirectRequest, replay: Replaying): Promise<unknown>;
}

/** How a delivery ended, for its report: the status the sender got, and why, when it was not the app's. */
interface Ending {
  status: number;
  error?: string;
}

/** One delivery on its way: what each step found, for the steps after it and for the finish. */
export interface Delivery {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly replay: Replaying;
  /** When it arrived (performance.now()). */
  readonly started: number;
  /** Reads the raw body whole, under the byte budget. */
  readonly read: () => Promise<Body | 'busy'>;
  /** Its path under --path, appended to the target's. */
  relative: string;
  aside: Aside | null;
  /** The raw body, held until the app has it. */
  body: Body | null;
  /**
   * The capture as made, until it is stored: for a large body it holds the whole decoded text, so it is let go
   * once stored (the stored one keeps only its beginning), never held while the app works on the delivery.
   */
  made: Capture | null;
  /** The capture as stored, durable. */
  stored: Capture | null;
  /** Where it went and what the app answered; null when it was not forwarded or the app did not answer. */
  forward: CaptureForward | null;
  /** How it ended; null: it ended before anything was captured, and its step said so. */
  ending: (Ending & { forward?: CaptureForward }) | null;
}

/** A step: false once the delivery is answered and no later step is to run. */
type Step = (d: Delivery, parts: ListenerParts) => boolean | Promise<boolean>;

/** A new delivery's context. */
export function deliveryOf(
  req: IncomingMessage,
  res: ServerResponse,
  read: () => Promise<Body | 'busy'>,
  replay: Replaying,
): Delivery {
  const started = performance.now();
  return {
    req,
    res,
    replay,
    started,
    read,
    relative: '',
    aside: null,
    body: null,
    made: null,
    stored: null,
    forward: null,
    ending: null,
  };
}

/** Step "route": the path under --path and the method (404 or 405 otherwise); the delivery's Aside. */
function route(d: Delivery, parts: ListenerParts): boolean {
  const relative = routeRequest(d.req, d.res, parts.basePath, parts.advisor);
  if (relative === null) return false;
  d.relative = relative;
  const { tracer, store } = parts.config;
  const linkTo = tracer && d.replay.replayOf ? store.get(d.replay.replayOf)?.trace : undefined;
  d.aside = Aside.of(d.req, parts.basePath, { tracer, injector: parts.injector }, linkTo);
  return true;
}

/** Step "read": the raw bytes, whole; refused at once (503, nothing captured) when the budget is full. */
async function read(d: Delivery, parts: ListenerParts): Promise<boolean> {
  const body = await d.read();
  if (body !== 'busy') {
    d.body = body;
    return true;
  }
  (d.aside as Aside).refused(503, 'listener_busy');
  const { maxBufferedBytes, onDelivery } = parts.config;
  const source = d.replay.replayOf === undefined ? 'delivery' : 'replay';
  refuseBusy(d.req, d.res, { advisor: parts.advisor, maxBufferedBytes, started: d.started }, (report) =>
    onDelivery(Object.assign(report, { source })),
  );
  return false;
}

/** Step "hold": until listen is ready (the secret known); stopped before that, the sender must send it again. */
async function hold(d: Delivery, parts: ListenerParts): Promise<boolean> {
  if (await parts.hold.pass()) return true;
  (d.aside as Aside).refused(503, 'listener_closing');
  answerError(d.res, 503, 'listener_closing', 'clockhook stopped before it was ready; retry later.', {
    requestId: newCaptureId(),
    headers: { 'retry-after': '10' },
  });
  return false;
}

/** The rule that keeps a delivery of `type` from the app: listen's first, then its route's; null when none does. */
function filterOf(parts: ListenerParts, facts: FilterFacts, type: string | null): string | null {
  const route = parts.routed ? chooseRoute(parts.routes, type) : parts.routes[0];
  return filteredBy(parts.filters, facts) ?? filteredBy(route?.filters ?? [], facts);
}

/** Steps "verify" and "capture": the signature checked with the secret known now, and the capture made. */
function capture(d: Delivery, parts: ListenerParts): boolean {
  const { req, replay } = d;
  const body = d.body as Body;
  const { tolerance, now, stories, skipVerify } = parts.config;
  const verify = (): CaptureSignature =>
    verifyDelivery(req.headers['x-service-signature'], body.bytes, { secret: parts.secret(), tolerance, now });
  const make = (signature: CaptureSignature): Capture =>
    captureOf(req, body, {
      signature,
      replayOf: replay.replayOf,
      edited: replay.edited,
      decide: (arriving, edited) => (stories as StoryBook).decide(arriving, { edited }),
      refuseUnsigned: !skipVerify,
      routeFor: (type) => (parts.routed ? (chooseRoute(parts.routes, type)?.name ?? null) : undefined),
      forwarding: parts.routes.length > 0,
      ...(parts.filtering ? { filter: (facts, type) => filterOf(parts, facts, type) } : {}),
      drift: (type, data, id) => parts.shapes.drift(type, data, id),
      now: now(),
    });
  d.made = (d.aside as Aside).capture(verify, make, replay);
  return true;
}

/**
 * Step "store": nothing goes to the app, and the sender is told nothing, before the capture is on the disk
 * (fsynced): a capture that cannot be kept is answered 503 and never forwarded, so the app never handles a
 * delivery that the sender is then told failed (and sends again).
 */
async function store(d: Delivery, parts: ListenerParts): Promise<boolean> {
  const made = d.made as Capture;
  d.made = null;
  const { stored, kept } = await (d.aside as Aside).store(made, async (capture) => {
    const { stored, failure } = await storeCapture(parts.config.store, capture, (d.body as Body).bytes);
    if (failure) answerUnstored(d.res, stored, failure, parts.config);
    return { stored, kept: !failure };
  });
  d.stored = stored;
  if (kept) return true;
  d.ending = { status: 503, error: 'capture_failed' };
  return false;
}

/** Step "answer" when the listener answers itself: a refusal, or 200 with no route (capture-only). */
function answer(d: Delivery, parts: ListenerParts): boolean {
  const stored = d.stored as Capture;
  if (!stored.rejected && stored.forward !== null && routeOfCapture(parts.routes, parts.routed, stored)) return true;
  const status = answerItself(d.res, stored, parts.config.maxBodyBytes);
  d.ending = { status, error: stored.rejected?.code };
  return false;
}

/**
 * Step "forward": the exact bytes go to the app with http-proxy, its answer goes back to the sender as it comes
 * (or the listener's own 502/504 when the app did not answer).
 */
async function forward(d: Delivery, parts: ListenerParts): Promise<boolean> {
  const { req, res, relative } = d;
  const aside = d.aside as Aside;
  const stored = d.stored as Capture;
  const { forwarder } = routeOfCapture(parts.routes, parts.routed, stored) as Route;
  const path = joinTargetPath(forwarder.target, relative);
  const bytes = (d.body as Body).bytes;
  const outcome = await aside.forward(req, forwarder.urlFor(path), () =>
    forwarder.forward(req, res, bytes, path, { keepAnswer: aside.keepsAnswer, captureId: stored.id }),
  );
  if (outcome.kind === 'failed')
    answerError(res, outcome.statusCode, outcome.code, outcome.message, { requestId: stored.id });
  const answered = outcome.kind === 'answered';
  const status = answered ? (outcome.forward.statusCode ?? 502) : outcome.statusCode;
  const error = aside.keepsAnswer && answered ? 'injected timeout: the sender is not answered' : outcome.forward.error;
  d.ending = { status, error, forward: outcome.forward };
  d.forward = answered ? outcome.forward : null;
  parts.advisor.forwarded(outcome.forward, status, stored.signature, relative);
  return true;
}

/** The steps of a delivery, in order. */
export const STEPS: readonly Step[] = [route, read, hold, capture, store, answer, forward];

/**
 * Runs a delivery's steps, then its one finish: the app's answer recorded on its capture (riding along with the
 * next write: the next delivery's answer waits for its own), and the delivery reported (listen's line, the
 * page, its span) from the record. Last, what its faults do after the sender was answered (see Aside.after).
 * Resolves with its capture, or null when none was made.
 */
export async function runDelivery(d: Delivery, parts: ListenerParts): Promise<Capture | null> {
  for (const step of STEPS) if (!(await step(d, parts))) break;
  const { stored, ending, aside } = d;
  if (!stored || !ending || !aside) return stored;
  if (ending.forward) await parts.config.store.update(stored.id, { forward: ending.forward }, { lazy: true });
  parts.reporter.report(
    stored,
    { status: ending.status, started: d.started, error: ending.error, forward: ending.forward },
    aside.trace,
  );
  const bytes = (d.body as Body).bytes;
  d.body = null;
  const sign = { secret: parts.secret(), now: parts.config.now() };
  await aside.after({ capture: stored, bytes, forward: d.forward, res: d.res }, sign, (request) =>
    parts.deliver(request, { injected: ['duplicate'] }),
  );
  return stored;
}
