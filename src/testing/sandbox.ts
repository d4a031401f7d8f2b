import { ApiClient, SandboxClient } from '../api/index.js';
import { changedData, type DeliveryAttempt, type EventRecord } from '../contract/index.js';
import { type SetTimer, startSandbox as startSandboxServer } from '../sandbox/index.js';
import { ManualClock } from './clock.js';

/** One delivery attempt as the service recorded it, with the event it was of. */
export interface Delivery extends DeliveryAttempt {
  eventId: string;
  type: string;
}

export interface SandboxTestOptions {
  /** `api_version` of the envelopes it sends. @default API_VERSION (the one clockhook sends) */
  apiVersion?: string;
  /** The receiver's time limit per attempt, in ms on the sandbox's clock (see `advance`). @default LIMITS.receiverTimeoutMs (the contract's) */
  deliveryTimeoutMs?: number;
  /**
   * What the service may do, on purpose, to test that a handler survives it: `duplicate` delivers every
   * event twice (once its first attempt is answered, the service redelivers it: same event id, the next
   * attempt); `reorder` sends the first attempts of events triggered within 50 ms of each other in the
   * reverse order (trigger them without waiting for each delivery).
   */
  faults?: { duplicate?: boolean; reorder?: boolean };
}

export interface TestSandbox {
  /** The sandbox's REST API, for an ApiClient or your own calls. */
  apiBase: string;
  apiKey: string;
  /** Registers an endpoint for `url` (plain http on 127.0.0.1 is allowed); returns its id and secret. */
  createEndpoint(url: string, options?: { events?: string[] }): Promise<{ id: number; secret: string }>;
  /** Emits an event: the type's sample data, or `data`, changed by `set` (paths as `trigger --set`). */
  trigger(
    type: string,
    options?: { data?: Record<string, unknown>; set?: Record<string, unknown> },
  ): Promise<EventRecord>;
  /** Every delivery attempt so far, oldest first, as the service recorded them. */
  deliveries(filter?: { eventId?: string; type?: string; endpointId?: number }): Promise<Delivery[]>;
  /** Resolves with the first attempt `predicate` accepts, once there is one; the error says what came instead. */
  waitForDelivery(predicate: (delivery: Delivery) => boolean, options?: { timeout?: number }): Promise<Delivery>;
  /**
   * Moves the sandbox's clock forward: retries (1, 5, 30 min, 2 h) and the receiver's 30 s limit come due
   * without waiting for them.
   */
  advance(ms: number): Promise<void>;
  /** Stops the sandbox and removes its state. Safe to call twice. */
  close(): Promise<void>;
}

/** Says what the attempts were, for an error that says what the handler did. */
function describeDeliveries(deliveries: Delivery[]): string {
  if (deliveries.length === 0) return 'no delivery attempt was made';
  return deliveries
    .map((d) => {
      const answer =
        d.statusCode === null
          ? `no answer (${d.error})`
          : `${d.statusCode}${d.responseBody ? `: ${d.responseBody.slice(0, 200)}` : ''}`;
      return `attempt ${d.attempt} of ${d.type} ${d.eventId} to endpoint ${d.endpointId}: ${answer}`;
    })
    .join('; ');
}

type DeliveryFilter = { eventId?: string; type?: string; endpointId?: number };

async function readDeliveries(client: ApiClient, filter: DeliveryFilter = {}): Promise<Delivery[]> {
  const events = (await client.listEvents({ limit: Number.POSITIVE_INFINITY, type: filter.type })).data.reverse();
  return events
    .filter((event) => filter.eventId === undefined || event.id === filter.eventId)
    .flatMap((event) => event.delivery_attempts.map((attempt) => ({ ...attempt, eventId: event.id, type: event.type })))
    .filter((d) => filter.endpointId === undefined || d.endpointId === filter.endpointId);
}

/** Reads the attempts again whenever one is made (and every second), until `predicate` takes one. */
async function waitForDelivery(
  client: ApiClient,
  arrivals: Set<() => void>,
  predicate: (delivery: Delivery) => boolean,
  timeout: number,
): Promise<Delivery> {
  const deadline = Date.now() + timeout;
  for (;;) {
    const seen = await readDeliveries(client);
    const found = seen.find(predicate);
    if (found) return found;
    const left = deadline - Date.now();
    if (left <= 0)
      throw new Error(`waitForDelivery: no matching delivery within ${timeout} ms; ${describeDeliveries(seen)}.`);
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, Math.min(left, 1000));
      function done() {
        clearTimeout(timer);
        arrivals.delete(done);
        resolve();
      }
      arrivals.add(done);
    });
  }
}

/**
 * The sandbox's timers with first attempts (due at once) held for 50 ms, and those of one window run in the
 * reverse order: events triggered together reach the handler out of order.
 */
function reordered(setTimer: SetTimer): SetTimer {
  let batch: { run: () => void }[] | null = null;
  return (callback, delayMs) => {
    if (delayMs > 0) return setTimer(callback, delayMs);
    const held = { run: callback };
    if (!batch) {
      const window: { run: () => void }[] = (batch = []);
      setTimeout(() => {
        batch = null;
        for (const one of window.reverse()) one.run();
      }, 50);
    }
    batch.push(held);
    return () => {
      held.run = () => {};
    };
  };
}

/**
 * The service's webhook API and delivery worker in this process, on a free port, with its state in memory
 * (nothing in your `.clockhook/`, nothing left behind), and a clock your test advances.
 */
export async function startSandbox(options: SandboxTestOptions = {}): Promise<TestSandbox> {
  const clock = new ManualClock();
  const arrivals = new Set<() => void>();
  const duplicated = new Set<string>();
  const sandbox = await startSandboxServer({
    port: 0,
    host: '127.0.0.1',
    // In memory: nothing to clean up, and no lowdb to load (CommonJS test runners require this file).
    dbPath: null,
    discoveryPath: null,
    apiVersion: options.apiVersion,
    deliveryTimeoutMs: options.deliveryTimeoutMs,
    setTimer: options.faults?.reorder ? reordered(clock.setTimer) : clock.setTimer,
    onAttempt: (attempt) => {
      // Once, after its first attempt: the same event again, as the service's redelivery sends it.
      if (options.faults?.duplicate && attempt.attempt === 1 && !duplicated.has(attempt.eventId)) {
        duplicated.add(attempt.eventId);
        // (Attempts come only once the sandbox runs, when `client` is made.)
        void client.redeliverEvent(attempt.eventId).catch(() => {});
      }
      for (const arrived of [...arrivals]) arrived();
    },
  });
  const client = new ApiClient({ baseUrl: sandbox.apiBase, apiKey: sandbox.apiKey });
  let closing: Promise<void> | undefined;

  return {
    apiBase: sandbox.apiBase,
    apiKey: sandbox.apiKey,
    async createEndpoint(url, { events = ['*'] } = {}) {
      const endpoint = await client.createEndpoint({ url, enabledEvents: events, description: 'clockhook/testing' });
      return { id: endpoint.id, secret: endpoint.secret as string };
    },
    async trigger(type, { data, set = {} } = {}) {
      const changed = changedData(type, { data, set: Object.entries(set) });
      // Nothing is unset here, so no path can be missing.
      return new SandboxClient(client).emit(type, 'data' in changed ? changed.data : undefined);
    },
    deliveries: (filter) => readDeliveries(client, filter),
    waitForDelivery: (predicate, { timeout = 10_000 } = {}) => waitForDelivery(client, arrivals, predicate, timeout),
    advance: (ms) => clock.advance(ms),
    close() {
      closing ??= (async () => {
        await sandbox.close();
      })();
      return closing;
    },
  };
}
