// `clockhook listen` as a library call takes ListenOptions; listenConfig makes them one whole configuration,
// every default in one place (LISTEN_DEFAULTS) and every check made at once, as the listener's options are
// (listener/options.ts). The CLI, the config file and the library call all come through it.
import type { ExporterEvent, TracingConfig } from '../tracing/config.js';
import { apiBaseProblem } from '../api/index.js';
import { validateSubscription, RETRY_SCHEDULE } from '../contract/index.js';
import { ListenUsageError } from './usage-error.js';
import { folderFiles } from '../folder/index.js';
import { LISTEN_DEFAULTS } from './defaults.js';
import {
  type FaultsOption,
  type ListenerOptions,
  MAX_BODY_BYTES,
  normalizeBasePath,
  type RouteOption,
} from '../listener/index.js';
import { isHttpUrl } from '../http/index.js';
import { silentLogger } from '../logger.js';
import { type Targets, targetsOf } from './targets.js';

/** The listener's options that listen passes on as they are, with the listener's defaults and docs. */
type ListenerPart =
  | 'port'
  | 'host'
  | 'path'
  | 'skipVerify'
  | 'tolerance'
  | 'timeoutMs'
  | 'waitForAppMs'
  | 'onAppState'
  | 'faults'
  | 'filters'
  | 'maxBufferedBytes'
  | 'logger'
  | 'onDelivery'
  | 'now';

export interface ListenOptions extends Pick<ListenerOptions, ListenerPart> {
  /**
   * Where deliveries go: the app (`3000`, `localhost:3000/hooks` or a URL), or routes by event type, each
   * `[TYPES=]TARGET` (`punch.*,time_entry.*=3000/a`): the first whose types take a delivery forwards it, one
   * none takes is answered 200 (see ListenerOptions); a route may carry filters of its own,
   * `{ to: 'punch.*=3000', filter: ['data.employeeId=42'] }`. None: capture-only mode. @default none
   */
  forwardTo?: string | readonly RouteOption[] | null;
  /** Port of the embedded sandbox; a free one is used when it is taken. @default 4302 */
  sandboxPort?: number;
  /** Verify with this secret instead of the registered endpoint's. */
  secret?: string;
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
  /** A key selects the real API (with apiBase); without one an embedded sandbox is used. */
  apiKey?: string;
  apiBase?: string;
  /** A public URL (tunnel) that reaches this listener, to register with the API. */
  publicUrl?: string;
  /** @default ['*'] */
  events?: string[];
  /** The caller starts the app once listen is ready (`listen -- <command>`): no warning that nothing answers yet. */
  startsApp?: boolean;
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
  /**
   * The embedded sandbox's retry delays are the service's (RETRY_SCHEDULE) times this: 0.01 turns
   * 1 min into 0.6 s. Only for a sandbox listen starts. @default 1
   */
  timeScale?: number;
  /** How often a sandbox of the folder that listen did not start is asked whether it still runs (see watchSandbox). @default 5000 */
  sandboxWatchMs?: number;
  /** When the endpoint is read again after a failed delivery (see EndpointWatch). @default 2 s after it, at most every 30 s */
  endpointCheck?: { settleMs?: number; minIntervalMs?: number };
}

export type ListenMode = 'sandbox' | 'api' | 'offline';

export type RelayEvent =
  | { state: 'connected'; publicUrl: string }
  | { state: 'disconnected'; reason: string }
  | { state: 'replaced'; message: string }
  /** The relay refused the access key (revoked while connected): listen should stop. */
  | { state: 'refused'; message: string }
  | { state: 'gave-up' };

/** The options listenConfig gives a value to whenever they are not given. */
type Defaulted =
  | keyof typeof LISTEN_DEFAULTS
  | 'dbPath'
  | 'logger'
  | 'now'
  | 'onAppState'
  | 'onTracing'
  | 'onRelayEvent'
  | 'onDelivery';

/** ListenOptions made whole: every default in place, forwarding as routes, the mode chosen, all checked. */
export type ListenConfig = Omit<
  ListenOptions,
  Defaulted | 'forwardTo' | 'secret' | 'timeScale' | 'tracing' | 'faults'
> &
  Required<Pick<ListenOptions, Defaulted>> & {
    mode: ListenMode;
    /** Where deliveries go (see Targets), parsed from `forwardTo`. */
    targets: Targets;
    /** `path`, normalized (a bad one refused here, before anything starts). */
    basePath: string;
    secret: string | null;
    /** As given: a time scale for the sandbox listen starts, null when none was given (1 then). */
    timeScale: number | null;
    tracing: TracingConfig | null;
    faults: FaultsOption | null;
  };

const noop = () => {};

/** The options over their defaults (an undefined field takes the default), checked: the whole configuration. */
export function listenConfig(options: ListenOptions): ListenConfig {
  const given = Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) as ListenOptions;
  const stateDir = given.stateDir ?? LISTEN_DEFAULTS.stateDir;
  const merged = {
    ...LISTEN_DEFAULTS,
    events: [...LISTEN_DEFAULTS.events],
    ...{ dbPath: folderFiles(stateDir).captures, logger: silentLogger, now: Date.now },
    ...{ onAppState: noop, onTracing: noop, onRelayEvent: noop, onDelivery: noop },
    ...given,
    ...{ secret: given.secret ?? null, timeScale: given.timeScale ?? null },
    ...{ tracing: given.tracing ?? null, faults: given.faults ?? null },
  };
  if (merged.maxBufferedBytes < MAX_BODY_BYTES)
    throw new ListenUsageError(
      `maxBufferedBytes must be at least ${MAX_BODY_BYTES}, the largest body a delivery may have (got ${merged.maxBufferedBytes}).`,
    );
  const mode = chooseMode(given);
  const { forwardTo: _given, ...rest } = merged;
  return { ...rest, mode, targets: targetsOf(given.forwardTo), basePath: normalizeBasePath(merged.path) };
}

/** The public URL's options, checked alone: a relay's origin, or a tunnel's URL, not both. */
function checkPublicUrl(options: ListenOptions): void {
  const { relay, publicUrl } = options;
  if (relay && publicUrl)
    throw new ListenUsageError('--relay and --public-url both name the public URL: give one of them.');
  if (relay && !isHttpUrl(relay)) {
    throw new ListenUsageError(
      `--relay ${JSON.stringify(relay)} is not an http(s) URL; give the relay's base URL, e.g. https://hooks.example.com`,
    );
  }
  // Listeners connect at /connect on the relay's root: a path, a query or a fragment would be lost.
  if (relay && (new URL(relay).pathname !== '/' || /[?#]/.test(relay))) {
    throw new ListenUsageError(
      `--relay ${JSON.stringify(relay)} is more than the relay's origin; give just that, e.g. ${new URL(relay).origin}, as \`clockhook relay\` prints it.`,
    );
  }
  if (publicUrl !== undefined && !isHttpUrl(publicUrl)) {
    throw new ListenUsageError(
      `--public-url ${JSON.stringify(publicUrl)} is not an http(s) URL; give the URL your tunnel serves, e.g. https://abc123.ngrok.app`,
    );
  }
}

/** The options that need the real API, checked: an API key goes with its base, and not with --time-scale. */
function checkApi(options: ListenOptions): void {
  const apiBase = options.apiBase === undefined ? null : apiBaseProblem(options.apiBase);
  if (apiBase)
    throw new ListenUsageError(
      `--api-base (or CLOCKHOOK_API_BASE) ${apiBase}: give the service's API base URL, e.g. https://api.example.com.`,
    );
  if (options.endpointId !== undefined && !options.secret)
    throw new ListenUsageError('--endpoint needs --secret: the secret is shown only when an endpoint is created.');
  const { timeScale } = options;
  if (timeScale !== undefined && !(Number.isFinite(timeScale) && timeScale > 0))
    throw new ListenUsageError(
      `--time-scale must be a positive number (got ${timeScale}); 0.01 turns 1 min into 0.6 s.`,
    );
  if (!options.apiKey) return;
  if (!options.apiBase)
    throw new ListenUsageError('an API key needs a base URL: pass --api-base or set CLOCKHOOK_API_BASE.');
  if (timeScale !== undefined)
    throw new ListenUsageError(
      `--time-scale speeds up the sandbox: the service retries on its own schedule (${RETRY_SCHEDULE}). Drop it, or the API key to use the sandbox.`,
    );
}

/**
 * Where deliveries come from: the real API (a key), offline (a secret without a key: deliveries come from
 * elsewhere, a tunnel the user set up), or the embedded sandbox. The options that make no sense for it are
 * refused, saying what to give.
 */
export function chooseMode(options: ListenOptions): ListenMode {
  checkPublicUrl(options);
  checkApi(options);
  if (options.apiKey) return 'api';
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
  if (options.secret) return 'offline';
  // The sandbox knows the contract's catalogue and would refuse the endpoint once everything had started;
  // the real service may know types this build does not, so there the service decides.
  const events = validateSubscription(options.events ?? ['*']);
  if (!events.ok) throw new ListenUsageError(`--events: ${events.message}`);
  return 'sandbox';
}

export { ListenUsageError };
