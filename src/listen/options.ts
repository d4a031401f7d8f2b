import type { ExporterEvent, TracingConfig } from '../tracing/config.js';
import type { AppStateEvent, FaultsOption } from '../listener/index.js';
import type { ApiClient, MissedEvent } from '../api/index.js';
import { apiBaseProblem } from '../api/index.js';
import { validateSubscription, type WebhookEndpoint } from '../contract/index.js';
import type { Inspector } from '../inspector/index.js';
import type { Logger } from '../logger.js';
import type { DeliveryReport, Listener } from '../listener/index.js';
import type { CaptureStore } from '../store/index.js';
import type { FolderKeeper } from '../folder/index.js';
import { ClockhookError } from '../errors.js';

export type ListenMode = 'sandbox' | 'api' | 'offline';

export interface ListenOptions {
  /** `3000`, `localhost:3000/hooks` or a URL; null for capture-only mode. */
  forwardTo?: string | null;
  /**
   * Routes by event type instead of `forwardTo`: each `[TYPES=]TARGET` (`punch.*,time_entry.*=3000/a`);
   * the first whose types take a delivery forwards it, one none takes is answered 200 (see ListenerOptions).
   */
  routes?: string[];
  /** @default 4300 */
  port?: number;
  /** Port of the embedded sandbox; a free one is used when it is taken. @default 4302 */
  sandboxPort?: number;
  /** @default '127.0.0.1' */
  host?: string;
  /** @default '/' */
  path?: string;
  /** Verify with this secret instead of the registered endpoint's. */
  secret?: string;
  /** @default false */
  skipVerify?: boolean;
  /** @default 300 */
  tolerance?: number;
  /** @default 30000 */
  timeoutMs?: number;
  /** How long a delivery waits for an app that is not answering (see AppWait); 0 turns it off. @default 10000 */
  waitForAppMs?: number;
  /** Told when the app stops answering and when it is back. */
  onAppState?: (event: AppStateEvent) => void;
  /** Faults injected on purpose (`--faults`, `--faults-seed`: docs/faults.md). */
  faults?: FaultsOption | null;
  /** Spans of each delivery over OTLP/HTTP (`--otlp`: docs/tracing.md); off by default. */
  tracing?: TracingConfig | null;
  /** Told when spans stop reaching the collector, and when they reach it again. */
  onTracing?: (event: ExporterEvent) => void;
  /** A link to a trace for the page, `{traceId}` in it: `http://localhost:16686/trace/{traceId}` (Jaeger's). */
  traceUrl?: string;
  /** @default '<stateDir>/captures.json' */
  dbPath?: string;
  /** @default 1000 */
  maxCaptures?: number;
  /** Bytes of request bodies held at once; past it requests are answered 503. @default 64 MiB */
  maxBufferedBytes?: number;
  /** A key selects the real API (with apiBase); without one an embedded sandbox is used. */
  apiKey?: string;
  apiBase?: string;
  /** A public URL (tunnel) that reaches this listener, to register with the API. */
  publicUrl?: string;
  /** @default ['*'] */
  events?: string[];
  /** A clockhook relay to get a public URL from (registered as the endpoint and kept between runs). */
  relay?: string;
  /** The access key of a relay with keys (`clockhook relay keys add`). */
  relayKey?: string;
  /** Give up (onRelayEvent 'gave-up') after this long without the relay. @default never */
  relayMaxDisconnectedMs?: number;
  /** Told when the relay connection changes; 'replaced' and 'gave-up' mean listen should stop. */
  onRelayEvent?: (event: RelayEvent) => void;
  /** Use this existing endpoint (with `secret`) and create nothing. */
  endpointId?: number;
  /** Keep the endpoint this run registered when it exits. @default false */
  keepEndpoint?: boolean;
  /** Serve the inspector page. @default true */
  inspector?: boolean;
  /** Inspector port, always on 127.0.0.1; a free one when taken. @default 4301 */
  inspectorPort?: number;
  /** The `.clockhook/` folder. @default '.clockhook' */
  stateDir?: string;
  /** @default silent */
  logger?: Logger;
  onDelivery?: (report: DeliveryReport) => void;
  /**
   * The embedded sandbox's retry delays are the service's (1 min, 5 min, 30 min, 2 h) times this: 0.01 turns
   * 1 min into 0.6 s. Only for a sandbox listen starts. @default 1
   */
  timeScale?: number;
  /** How often a sandbox of the folder that listen did not start is asked whether it still runs (see watchSandbox). @default 5000 */
  sandboxWatchMs?: number;
  /** When the endpoint is read again after a failed delivery (see EndpointWatch). @default 2 s after it, at most every 30 s */
  endpointCheck?: { settleMs?: number; minIntervalMs?: number };
  /** @default Date.now */
  now?: () => number;
}

export type RelayEvent =
  | { state: 'connected'; publicUrl: string }
  | { state: 'disconnected'; reason: string }
  | { state: 'replaced'; message: string }
  /** The relay refused the access key (revoked while connected): listen should stop. */
  | { state: 'refused'; message: string }
  | { state: 'gave-up' };

export interface ReadyInfo {
  event: 'ready';
  listener: string;
  inspector: string | null;
  forwardTo: string | null;
  /** With routes by event type: each as `TYPES=TARGET` (or the target, for one that takes every type). */
  routes?: string[];
  apiBase: string | null;
  sandbox: boolean;
  endpointId: number | null;
  publicUrl: string | null;
  /** With --faults: the faults as given, and the seed that repeats them. */
  faults?: { spec: string; seed: number };
  /** With tracing on: where spans go, and under what service name. */
  tracing?: TracingConfig;
}

export interface ListenSession {
  ready: ReadyInfo;
  mode: ListenMode;
  /** The secret in use, for `--print-secret` and the masked display; never sent to the page. */
  secret: string | null;
  /**
   * The command that prints `secret` while this run goes on (`npx clockhook secret`, with the endpoint's id
   * when several are on file); null when the secret is not on file (given with --secret, or none).
   */
  secretCommand: string | null;
  /** Whether the endpoint this run registered stays, with its secret, for the next run (see keepsEndpoint). */
  endpointKept: boolean;
  /** Whether the endpoint existed before this run (reused, moved, or --endpoint): deliveries may have been missed. */
  endpointExisted: boolean;
  /** What the contract's retry delays are multiplied by at this API (a sandbox's --time-scale), else 1. */
  timeScale: number;
  /** The endpoint deliveries come to, as last read (see EndpointWatch); null offline. */
  readonly endpoint: WebhookEndpoint | null;
  listener: Listener;
  store: CaptureStore;
  inspector: Inspector | null;
  /** The API client (sandbox or service), null when offline. */
  client: ApiClient | null;
  /**
   * Reads the events that came while listen was off and did not reach the endpoint (none for an endpoint
   * new to this run), and shows them on the page until they are redelivered.
   */
  findMissed(): Promise<MissedEvent[]>;
  /**
   * Redelivers the missed events through the API (re-enabling a disabled endpoint first); `confirm` is
   * asked when other endpoints would get them too. The page's list goes once they are redelivered.
   */
  catchUp(
    confirm: (others: WebhookEndpoint[], reach: string) => Promise<boolean>,
    say: (line: string) => void,
  ): Promise<{ redelivered: string[]; reenabled: boolean }>;
  /** Finishes in-flight forwards, flushes the store, deletes the endpoint it created unless kept. Safe to call twice. */
  close(): Promise<void>;
}

/** A mistake in the options: the CLI turns it into exit code 2. */
export class ListenUsageError extends ClockhookError {
  override readonly name = 'ListenUsageError';
  get exitCode(): 2 {
    return 2;
  }
}

const isHttpUrl = (value: string) => URL.canParse(value) && /^https?:$/.test(new URL(value).protocol);

export function chooseMode(options: ListenOptions): ListenMode {
  const apiBase = options.apiBase === undefined ? null : apiBaseProblem(options.apiBase);
  if (apiBase)
    throw new ListenUsageError(
      `--api-base (or CLOCKHOOK_API_BASE) ${apiBase}: give the service's API base URL, e.g. https://api.example.com.`,
    );
  if (options.relay && options.publicUrl)
    throw new ListenUsageError('--relay and --public-url both name the public URL: give one of them.');
  if (options.relay && !isHttpUrl(options.relay)) {
    throw new ListenUsageError(
      `--relay ${JSON.stringify(options.relay)} is not an http(s) URL; give the relay's base URL, e.g. https://hooks.example.com`,
    );
  }
  // Listeners connect at /connect on the relay's root: a path, a query or a fragment would be lost.
  if (options.relay && (new URL(options.relay).pathname !== '/' || /[?#]/.test(options.relay))) {
    throw new ListenUsageError(
      `--relay ${JSON.stringify(options.relay)} is more than the relay's origin; give just that, e.g. ${new URL(options.relay).origin}, as \`clockhook relay\` prints it.`,
    );
  }
  if (options.publicUrl !== undefined && !isHttpUrl(options.publicUrl)) {
    throw new ListenUsageError(
      `--public-url ${JSON.stringify(options.publicUrl)} is not an http(s) URL; give the URL your tunnel serves, e.g. https://abc123.ngrok.app`,
    );
  }
  if (options.endpointId !== undefined && !options.secret) {
    throw new ListenUsageError('--endpoint needs --secret: the secret is shown only when an endpoint is created.');
  }
  const { timeScale } = options;
  if (timeScale !== undefined && !(Number.isFinite(timeScale) && timeScale > 0))
    throw new ListenUsageError(
      `--time-scale must be a positive number (got ${timeScale}); 0.01 turns 1 min into 0.6 s.`,
    );
  if (options.apiKey) {
    if (!options.apiBase)
      throw new ListenUsageError('an API key needs a base URL: pass --api-base or set CLOCKHOOK_API_BASE.');
    if (timeScale !== undefined)
      throw new ListenUsageError(
        '--time-scale speeds up the sandbox: the service retries on its own schedule (1 min, 5 min, 30 min, 2 h). Drop it, or the API key to use the sandbox.',
      );
    return 'api';
  }
  if (options.endpointId !== undefined)
    throw new ListenUsageError('--endpoint needs an API key (--api-key or CLOCKHOOK_API_KEY) and --api-base.');
  if (options.publicUrl)
    throw new ListenUsageError(
      '--public-url registers an endpoint with the real API: pass --api-key and --api-base too.',
    );
  if (options.relay && options.secret)
    throw new ListenUsageError(
      '--relay registers an endpoint, which needs the API or the sandbox: drop --secret, or pass --api-key and --api-base.',
    );
  // A secret without a key: deliveries come from elsewhere (a tunnel the user set up); no sandbox.
  if (options.secret) return 'offline';
  // The sandbox knows the contract's catalogue and would refuse the endpoint once everything had started;
  // the real service may know types this build does not, so there the service decides.
  const events = validateSubscription(options.events ?? ['*']);
  if (!events.ok) throw new ListenUsageError(`--events: ${events.message}`);
  return 'sandbox';
}

/** What the set-up steps share; each step registers how to undo itself in `cleanups`. */
export interface Setup {
  options: ListenOptions;
  mode: ListenMode;
  logger: Logger;
  stateDir: string;
  cleanups: (() => Promise<void>)[];
  /** The keeper of the state folder: each part of the session registers the files it keeps there with it. */
  keeper: FolderKeeper;
  /** Told of every delivery the listener answered, after `options.onDelivery`. */
  onDelivery: (report: DeliveryReport) => void;
  /** Told when the app stops answering or is back: `options.onAppState`, then the page once it runs. */
  onAppState: (event: AppStateEvent) => void;
}

/** A client of the API, and the base its endpoints are recorded under in endpoints.json (see connectApi). */
export interface Api {
  client: ApiClient;
  recordsBase: string;
  /** What the contract's retry delays are multiplied by: the folder's sandbox's --time-scale, else 1. */
  timeScale: number;
}
