import { randomBytes } from 'node:crypto';
import { type DeliveryAttempt, type DeliveryEnvelope, LIMITS, PING_EVENT_TYPE, resign } from '../contract/index.js';
import { describeConnectionError, postBytes } from '../http/index.js';
import type { DeliveryRecord, EndpointRecord, EventRecordStored, SandboxDb } from './state.js';
import { isTaken } from '../contract/index.js';

export interface AttemptReport {
  eventId: string;
  type: string;
  endpointId: number;
  url: string;
  attempt: number;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  /** delivered: 2xx; retrying: another attempt is scheduled; failed: the 5th attempt failed. */
  outcome: 'delivered' | 'retrying' | 'failed';
  /** Set when this failure made the endpoint reach 10 consecutive failed deliveries. */
  endpointDisabled?: boolean;
}

export interface DeliveryWorkerOptions {
  db: SandboxDb;
  /** Persists the state after each change (coalesced by the caller). */
  persist: () => Promise<void>;
  /** Multiplies the retry delays (not the time-out). @default 1 */
  timeScale: number;
  /** The receiver's time limit per attempt (contract: 30 s). */
  timeoutMs: number;
  now: () => number;
  /** Runs `callback` after `delayMs`; returns what cancels it. Tests put a clock they advance here. */
  setTimer: SetTimer;
  onAttempt: (report: AttemptReport) => void;
}

/** A timer: `callback` after `delayMs`, and the function that cancels it. */
export type SetTimer = (callback: () => void, delayMs: number) => () => void;

/** Timers of the real clock. */
export const realTimer: SetTimer = (callback, delayMs) => {
  const timer = setTimeout(callback, delayMs);
  return () => clearTimeout(timer);
};

interface PostResult {
  statusCode: number | null;
  body: string;
  error: string | null;
}

const USER_AGENT = 'clockhook-sandbox (time-tracking service emulator)';

/**
 * The sandbox's background delivery worker: one independent task per (event, endpoint), so a slow
 * or failing receiver never delays another delivery. Retries follow the contract's table, each delay
 * counted from the end of the previous attempt and multiplied by the time scale.
 */
export class DeliveryWorker {
  readonly #options: DeliveryWorkerOptions;
  readonly #timers = new Map<string, () => void>();
  readonly #inFlight = new Set<Promise<void>>();
  readonly #closing = new AbortController();
  /**
   * The posts on their way, each stopped by its own controller: at its time limit, or by close. Not
   * `AbortSignal.any` with the closing signal: in Node 20 each one made V8 hidden classes and stayed listed on it.
   */
  readonly #posting = new Set<AbortController>();

  constructor(options: DeliveryWorkerOptions) {
    this.#options = options;
  }

  /** Resumes deliveries that were pending when the sandbox last stopped. */
  resume(): void {
    for (const delivery of this.#options.db.data.deliveries) {
      if (delivery.state === 'pending')
        this.#schedule(delivery, Math.max(0, (delivery.nextAttemptAt ?? 0) - this.#options.now()));
    }
  }

  /** Queues `event` for each endpoint; the first attempt starts at once, off the caller's path. */
  enqueue(event: EventRecordStored, endpoints: EndpointRecord[]): void {
    for (const endpoint of endpoints) {
      const delivery: DeliveryRecord = {
        id: `dlv_${randomBytes(8).toString('hex')}`,
        eventId: event.id,
        endpointId: endpoint.id,
        attemptsMade: 0,
        state: 'pending',
        nextAttemptAt: this.#options.now(),
      };
      this.#options.db.data.deliveries.push(delivery);
      this.#schedule(delivery, 0);
    }
  }

  /** Stops the deliveries still pending for a deleted endpoint. */
  cancelForEndpoint(endpointId: number): void {
    for (const delivery of this.#options.db.data.deliveries) {
      if (delivery.endpointId !== endpointId || delivery.state !== 'pending') continue;
      delivery.state = 'cancelled';
      delivery.nextAttemptAt = null;
      this.#timers.get(delivery.id)?.();
      this.#timers.delete(delivery.id);
    }
  }

  /** Stops scheduling, aborts attempts in flight (they stay pending and resume on the next start). */
  async close(): Promise<void> {
    this.#closing.abort();
    for (const post of this.#posting) post.abort();
    for (const cancel of this.#timers.values()) cancel();
    this.#timers.clear();
    await Promise.allSettled([...this.#inFlight]);
  }

  #schedule(delivery: DeliveryRecord, delayMs: number): void {
    if (this.#closing.signal.aborted) return;
    const cancel = this.#options.setTimer(() => {
      this.#timers.delete(delivery.id);
      const task = this.#attempt(delivery).finally(() => this.#inFlight.delete(task));
      this.#inFlight.add(task);
    }, delayMs);
    this.#timers.set(delivery.id, cancel);
  }

  async #attempt(delivery: DeliveryRecord): Promise<void> {
    const { db, now } = this.#options;
    const event = db.data.events.find((e) => e.id === delivery.eventId);
    const endpoint = db.data.endpoints.find((e) => e.id === delivery.endpointId);
    if (!event || !endpoint || delivery.state !== 'pending') {
      delivery.state = delivery.state === 'pending' ? 'cancelled' : delivery.state;
      return;
    }
    // Contract: a disabled endpoint is excluded from deliveries, so a retry that comes due while it is
    // disabled is not made (nor any later one). A ping still goes: it is the diagnostic for a broken
    // endpoint (DESIGN.md).
    if (endpoint.status !== 'enabled' && event.type !== PING_EVENT_TYPE) {
      delivery.state = 'cancelled';
      delivery.nextAttemptAt = null;
      await this.#options.persist();
      return;
    }
    const started = performance.now();
    const result = await this.#post(endpoint, event);
    if (this.#closing.signal.aborted) return; // not an attempt: we stopped, not the receiver
    const durationMs = Math.round(performance.now() - started);

    const attempt: DeliveryAttempt = {
      attempt: delivery.attemptsMade + 1,
      endpointId: endpoint.id,
      statusCode: result.statusCode,
      responseBody: result.body.slice(0, LIMITS.storedResponseBodyChars),
      durationMs,
      error: result.error,
      createdAt: new Date(now()).toISOString(),
    };
    // Recorded only now that the attempt is complete (contract: entries appear after completion).
    event.delivery_attempts.push(attempt);
    delivery.attemptsMade = attempt.attempt;
    const report = this.#settle(delivery, endpoint, result);
    await this.#options.persist();
    this.#options.onAttempt({
      eventId: event.id,
      type: event.type,
      endpointId: endpoint.id,
      url: endpoint.url,
      attempt: attempt.attempt,
      statusCode: attempt.statusCode,
      durationMs,
      error: attempt.error,
      ...report,
    });
  }

  #settle(
    delivery: DeliveryRecord,
    endpoint: EndpointRecord,
    result: PostResult,
  ): Pick<AttemptReport, 'outcome' | 'endpointDisabled'> {
    const ok = isTaken(result.statusCode);
    if (ok) {
      delivery.state = 'delivered';
      delivery.nextAttemptAt = null;
      endpoint.consecutiveFailures = 0;
      return { outcome: 'delivered' };
    }
    if (delivery.attemptsMade < LIMITS.deliveryAttempts) {
      const delay = LIMITS.retryDelaysMs[delivery.attemptsMade] * this.#options.timeScale;
      delivery.nextAttemptAt = this.#options.now() + delay;
      this.#schedule(delivery, delay);
      return { outcome: 'retrying' };
    }
    delivery.state = 'failed';
    delivery.nextAttemptAt = null;
    endpoint.consecutiveFailures += 1;
    // Contract: 10 consecutive failed deliveries disable the endpoint.
    if (endpoint.status === 'enabled' && endpoint.consecutiveFailures >= LIMITS.consecutiveFailuresToDisable) {
      endpoint.status = 'disabled';
      endpoint.updatedAt = new Date(this.#options.now()).toISOString();
      return { outcome: 'failed', endpointDisabled: true };
    }
    return { outcome: 'failed' };
  }

  async #post(endpoint: EndpointRecord, event: EventRecordStored): Promise<PostResult> {
    const envelope: DeliveryEnvelope = {
      id: event.id,
      object: 'event',
      type: event.type,
      api_version: event.apiVersion,
      created: event.created,
      data: event.data,
    };
    const body = JSON.stringify(envelope);
    // The receiver's time limit runs on the worker's timers, so a test's clock can bring it about.
    const post = new AbortController();
    let timedOut = false;
    const cancelTimeout = this.#options.setTimer(() => {
      timedOut = true;
      post.abort();
    }, this.#options.timeoutMs);
    this.#posting.add(post);
    if (this.#closing.signal.aborted) post.abort();
    const headers = resign(
      { 'content-type': 'application/json', 'user-agent': USER_AGENT, 'x-service-event': event.type },
      body,
      { secret: endpoint.secret, now: this.#options.now() },
    );
    try {
      // A 3xx is an answer, and not a 2xx: a failed attempt, never followed.
      const answer = await postBytes(new URL(endpoint.url), headers, body, {
        signal: post.signal,
        maxChars: LIMITS.storedResponseBodyChars,
      });
      return { statusCode: answer.status, body: answer.body, error: null };
    } catch (error) {
      return {
        statusCode: null,
        body: '',
        error: describeFailure(error as NodeJS.ErrnoException, timedOut, this.#options.timeoutMs),
      };
    } finally {
      cancelTimeout();
      this.#posting.delete(post);
    }
  }
}

function describeFailure(error: NodeJS.ErrnoException, timedOut: boolean, timeoutMs: number): string {
  return timedOut ? `timed out after ${timeoutMs} ms` : describeConnectionError(error, 'the receiver');
}
