// What rides along one delivery's steps without being one of them: its spans (`listen --otlp`) and its faults on
// purpose (`listen --faults`). The listener runs each step through its delivery's Aside, which wraps it from
// outside; the steps themselves know neither. With both off, every wrapper just runs the step.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Capture, CaptureForward, TraceRef } from '../store/index.js';
import type { DirectRequest } from './direct.js';
import type { FaultPlan } from './faults.js';
import type { ForwardOutcome } from './forward.js';
import type { Injector } from './injector.js';
import type { Replaying } from './replay.js';
import type { DeliveryTrace, DeliveryTracer } from './tracing.js';

/** What an Aside is made with: the listener's tracer and injector (null when off). */
export interface AsideParts {
  tracer: DeliveryTracer | null;
  injector: Injector | null;
}

/** The tracing and faults of one delivery. */
export class Aside {
  /** The faults decided for it, once captured (null: none). */
  #plan: FaultPlan | null = null;

  private constructor(
    readonly trace: DeliveryTrace | null,
    private readonly injector: Injector | null,
  ) {}

  /**
   * The aside of a request routed to the listener: with tracing on, its server span, a child of the
   * `traceparent` it came with (a replay's links to the span of the delivery it repeats, `linkTo`).
   */
  static of(req: IncomingMessage, path: string, { tracer, injector }: AsideParts, linkTo?: TraceRef): Aside {
    const trace = tracer?.start(req.headers, { method: req.method ?? 'POST', path, linkTo }) ?? null;
    return new Aside(trace, injector);
  }

  /** A request answered before it was captured (the budget full, the listener closing): its span ends so. */
  refused(status: number, errorType: string): void {
    this.trace?.end(status, { 'error.type': errorType });
  }

  /**
   * Steps "verify" and "capture", each in a span of its own: the capture as `make` builds it from the
   * verdict `verify` gives, with the faults decided on it (a delivery the listener sends itself as an
   * injected duplicate carries its own `injected` and gets no faults of its own).
   */
  capture(
    verify: () => Capture['signature'],
    make: (signature: Capture['signature']) => Capture,
    replay: Replaying,
  ): Capture {
    const verified = this.trace?.step('verify');
    const signature = verify();
    verified?.({ 'clockhook.signature': signature.status });
    const made = make(signature);
    if (replay.injected) return Object.assign({}, made, { injected: replay.injected });
    if (!this.injector) return made;
    const decided = this.injector.decide(made);
    this.#plan = decided.plan;
    return decided.capture;
  }

  /** Step "store" in the capture's span: the capture as stored (with its trace), and whether it is durable. */
  async store(made: Capture, keep: (capture: Capture) => Promise<{ stored: Capture; kept: boolean }>) {
    const captured = this.trace?.step('capture', { 'clockhook.capture.id': made.id });
    const result = await keep(this.trace ? Object.assign({}, made, { trace: this.trace.ref }) : made);
    captured?.(result.kept ? {} : { 'error.type': 'capture_failed' });
    return result;
  }

  /**
   * Step "forward": held first as its faults say (a delay, its turn in a reordered batch), in a client span
   * whose `traceparent` the forwarded request carries (only with tracing on is a header added).
   */
  async forward(req: IncomingMessage, url: string, run: () => Promise<ForwardOutcome>): Promise<ForwardOutcome> {
    const done = this.#plan && this.injector ? await this.injector.before(this.#plan) : () => {};
    const span = this.trace?.forward(url);
    if (span) Object.assign(req.headers, span.headers);
    const outcome = await run().finally(done);
    span?.end(outcome.forward.statusCode, outcome.forward.error);
    return outcome;
  }

  /** An injected timeout: the sender is kept from the app's answer (see Injector.holdAnswer). */
  get keepsAnswer(): boolean {
    return Boolean(this.#plan?.timeout);
  }

  /**
   * After the sender was answered: an injected duplicate goes (the same bytes, signed again, a delivery of its
   * own), and an injected timeout holds the sender's answer until it gives up.
   */
  async after(
    answered: { capture: Capture; bytes: Buffer; forward: CaptureForward | null; res: ServerResponse },
    sign: { secret: string | null; now: number },
    deliver: (request: DirectRequest) => Promise<unknown>,
  ): Promise<void> {
    if (!this.#plan || !this.injector || !answered.forward) return;
    if (this.#plan.duplicate) void this.injector.duplicate(answered.capture, answered.bytes, sign, deliver);
    if (this.#plan.timeout) await this.injector.holdAnswer(answered.res);
  }
}
