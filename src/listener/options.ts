import { type CaptureStory, StoryBook } from '../story/index.js';
import { DEFAULT_TOLERANCE_SECONDS, LIMITS, MAX_DELIVERY_BYTES } from '../contract/index.js';
import { type Logger, silentLogger } from '../logger.js';
import { type AppStateEvent, DEFAULT_WAIT_FOR_APP_MS, SERVICE_LIMIT_SECONDS } from './app-wait.js';
import type { ForwardRoute } from './routes.js';
import type { FaultsOption } from './injector.js';
import type { DeliveryTracer } from './tracing.js';
import type { Capture, CaptureSignature, CaptureStore } from '../store/index.js';
import { OptionError } from '../errors.js';

/** What listen is told of every request the listener answered (its terminal line, its `--json` line). */
export interface DeliveryReport {
  /** Null for a request refused before it was read whole (listener_busy): nothing was captured. */
  captureId: string | null;
  source: Capture['source'];
  eventId: string | null;
  type: string | null;
  signature: CaptureSignature['status'];
  signatureReason?: string;
  /** What it was for its event, and the event's state once the sender was answered (null: not captured). */
  story: CaptureStory | null;
  /** For a duplicate only: the capture the app had taken before. */
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
  /** With routes by event type: the route that took it, or null when none did. */
  route?: string | null;
  /** Faults injected on purpose (`listen --faults`): "delay 120 ms", "duplicate", … */
  injected?: string[];
  /** How long it was held for an app that was not answering (`--wait-for-app`). */
  waitedMs?: number;
  /** The app's answer was cut short (its connection closed mid-answer): it failed, whatever its status. */
  cut?: true;
}

export interface ListenerOptions {
  store: CaptureStore;
  /** The stories of the store's events, as listen shares them with the page. @default a StoryBook watching `store` */
  stories?: StoryBook;
  /**
   * Where deliveries go: one route that takes every type (the app), or routes by event type (`--forward-to
   * TYPES=TARGET`, repeated: the first whose types take a delivery's type forwards it; one no route takes is
   * answered 200 and recorded with `route: null`). None: capture-only, the listener answers 200 itself.
   */
  routes: ForwardRoute[];
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
  /** Time the app has to answer. @default LIMITS.receiverTimeoutMs (the contract's) */
  timeoutMs?: number;
  /**
   * How long a delivery waits for an app that is not answering (refusing connections: restarting, say) before
   * the sender gets 502; 0 turns it off. Under the service's 30 s limit. @default 10000
   */
  waitForAppMs?: number;
  /** Told when the app stops answering and when it is back (see AppWait). */
  onAppState?: (event: AppStateEvent) => void;
  /** Faults injected on purpose (`listen --faults`); none by default. */
  faults?: FaultsOption | null;
  /**
   * `--filter` rules a delivery must all match to be forwarded (`type=punch.*`, `data.employeeId=42`; see
   * listener/filters.ts); one that does not is captured and answered 200. None by default.
   */
  filters?: readonly string[];
  /** Spans of each delivery (`listen --otlp`); null: tracing off. */
  tracer?: DeliveryTracer | null;
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
   * once the endpoint is. What arrives meanwhile would otherwise be "unchecked" and forwarded, forged or
   * not. @default false
   */
  held?: boolean;
}

/** The largest body a delivery may have; beyond it the answer is 413. */
export const MAX_BODY_BYTES = MAX_DELIVERY_BYTES;

const DEFAULTS = {
  port: 4300,
  host: '127.0.0.1',
  path: '/',
  secret: null as string | null,
  skipVerify: false,
  tolerance: DEFAULT_TOLERANCE_SECONDS,
  timeoutMs: LIMITS.receiverTimeoutMs as number,
  waitForAppMs: DEFAULT_WAIT_FOR_APP_MS,
  onAppState: (_event: AppStateEvent) => {},
  faults: null as FaultsOption | null,
  filters: [] as readonly string[],
  tracer: null as DeliveryTracer | null,
  maxBodyBytes: MAX_BODY_BYTES,
  maxBufferedBytes: 64 * 1024 * 1024,
  requestTimeoutMs: 60_000,
  now: Date.now,
  logger: silentLogger,
  onDelivery: (_report: DeliveryReport) => {},
  held: false,
};

export type ListenerConfig = typeof DEFAULTS & Pick<ListenerOptions, 'store' | 'routes'> & { stories: StoryBook };

/** The options over their defaults (an undefined field takes the default), checked. */
export function listenerConfig(options: ListenerOptions): ListenerConfig {
  const given = Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined));
  const config = Object.assign({}, DEFAULTS, given) as ListenerConfig;
  config.stories ??= StoryBook.watching(config.store, config.now);
  if (!Number.isInteger(config.timeoutMs) || config.timeoutMs < 1)
    throw new OptionError(`timeoutMs must be a positive integer (got ${config.timeoutMs}).`);
  const limit = SERVICE_LIMIT_SECONDS * 1000;
  if (!Number.isInteger(config.waitForAppMs) || config.waitForAppMs < 0 || config.waitForAppMs >= limit)
    throw new OptionError(
      `waitForAppMs must be 0 or more ms, under the service's ${SERVICE_LIMIT_SECONDS} s limit for a delivery (got ${config.waitForAppMs}).`,
    );
  if (!Number.isFinite(config.tolerance) || config.tolerance < 0)
    throw new OptionError(`tolerance must be 0 or more seconds (got ${config.tolerance}).`);
  if (!(config.maxBufferedBytes >= config.maxBodyBytes)) {
    throw new OptionError(
      `maxBufferedBytes (${config.maxBufferedBytes}) must be at least maxBodyBytes (${config.maxBodyBytes}): one delivery of the largest size must fit.`,
    );
  }
  return config;
}
