import { connect } from 'node:net';
import { join } from 'node:path';
import { ApiClient, apiBaseProblem } from '../api/index.js';
import { maskSecret, validateSubscription, type WebhookEndpoint } from '../contract/index.js';
import { type Inspector, startInspector } from '../inspector/index.js';
import { type Logger, silentLogger } from '../logger.js';
import { connectRelay, loadRelayRecord, saveRelayRecord } from '../relay/index.js';
import { findRunningSandbox, type Sandbox, startSandbox } from '../sandbox/index.js';
import { CaptureStore } from '../store/index.js';
import {
  EndpointWatch,
  type EndpointRecordOnFile,
  isSandboxBase,
  readEndpointRecords,
  registerEndpoint,
  releaseEndpoint,
} from './endpoint.js';
import { type DeliveryReport, Listener } from './listener.js';
import { watchSandbox } from './sandbox-watch.js';
import { isListenerItself, normalizeBasePath, normalizeForwardTarget, pathUnderBase } from './target.js';
import { onPortOrFree, shownUrl } from '../net.js';

export type ListenMode = 'sandbox' | 'api' | 'offline';

export interface ListenOptions {
  /** `3000`, `localhost:3000/hooks` or a URL; null for capture-only mode. */
  forwardTo?: string | null;
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
  | { state: 'gave-up' };

export interface ReadyInfo {
  event: 'ready';
  listener: string;
  inspector: string | null;
  forwardTo: string | null;
  apiBase: string | null;
  sandbox: boolean;
  endpointId: number | null;
  publicUrl: string | null;
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
  /** The endpoint deliveries come to, as last read (see EndpointWatch); null offline. */
  readonly endpoint: WebhookEndpoint | null;
  listener: Listener;
  store: CaptureStore;
  inspector: Inspector | null;
  /** The API client (sandbox or service), null when offline. */
  client: ApiClient | null;
  /** Finishes in-flight forwards, flushes the store, deletes the endpoint it created unless kept. Safe to call twice. */
  close(): Promise<void>;
}

/** A mistake in the options: the CLI turns it into exit code 2. */
export class ListenUsageError extends Error {
  override readonly name = 'ListenUsageError';
}

async function isAnswering(url: URL, timeoutMs = 1000): Promise<boolean> {
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  return new Promise((resolve) => {
    const socket = connect({ host: url.hostname.replace(/^\[|\]$/g, ''), port, timeout: timeoutMs });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
    socket.once('timeout', () => done(false));
  });
}

/** Checks the combination of options and picks where deliveries come from. */
const isHttpUrl = (value: string) => URL.canParse(value) && /^https?:$/.test(new URL(value).protocol);

function chooseMode(options: ListenOptions): ListenMode {
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
  if (options.apiKey) {
    if (!options.apiBase)
      throw new ListenUsageError('an API key needs a base URL: pass --api-base or set CLOCKHOOK_API_BASE.');
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
interface Setup {
  options: ListenOptions;
  mode: ListenMode;
  logger: Logger;
  stateDir: string;
  cleanups: (() => Promise<void>)[];
  /** Told of every delivery the listener answered, after `options.onDelivery`. */
  onDelivery: (report: DeliveryReport) => void;
}

async function startCapturing(
  setup: Setup,
  forwardTo: URL | null,
): Promise<{ store: CaptureStore; listener: Listener }> {
  const { options, logger, stateDir, cleanups } = setup;
  const store = await CaptureStore.open({
    path: options.dbPath ?? join(stateDir, 'captures.json'),
    maxCaptures: options.maxCaptures,
    logger,
    now: options.now,
  });
  cleanups.push(() => store.close());
  const listener = new Listener({
    store,
    forwardTo,
    port: options.port ?? 4300,
    host: options.host,
    path: options.path,
    secret: options.secret ?? null,
    skipVerify: options.skipVerify,
    tolerance: options.tolerance,
    timeoutMs: options.timeoutMs,
    maxBufferedBytes: options.maxBufferedBytes,
    now: options.now,
    logger,
    onDelivery: setup.onDelivery,
    // Until the endpoint and its secret are known (released in startListen).
    held: true,
  });
  await listener.start();
  cleanups.push(() => listener.close());
  if (forwardTo && (await isListenerItself(forwardTo, { host: options.host ?? '127.0.0.1', port: listener.port }))) {
    throw new ListenUsageError(
      `--forward-to ${shownUrl(forwardTo)} is this listener itself (port ${listener.port}): every delivery would come back to it. Give your app's port, such as --forward-to 3000, or move the listener with --port.`,
    );
  }
  return { store, listener };
}

/** A client of the API, and the base its endpoints are recorded under in endpoints.json (see connectApi). */
interface Api {
  client: ApiClient;
  recordsBase: string;
  /** What the contract's retry delays are multiplied by: the folder's sandbox's --time-scale, else 1. */
  timeScale: number;
}

/**
 * The real API, the sandbox already running in this folder, or an embedded one; none offline. With
 * it, the API base its endpoints are recorded under in endpoints.json: its own, except for an embedded
 * sandbox, which may find its port taken and run on another one over the same state file. It is the
 * same API, so its records stay under the port asked for; else a relay's endpoint would be created
 * again, with a new secret, whenever port 4302 happened to be busy.
 */
async function connectApi({ options, mode, logger, stateDir, cleanups }: Setup): Promise<Api | null> {
  const connect = (baseUrl: string, apiKey: string, recordsBase?: string, timeScale = 1) => {
    const client = new ApiClient({ baseUrl, apiKey, logger });
    // As the client spells it: `--api-base https://api.example.com/` one day and without the slash the next is one API.
    return { client, recordsBase: recordsBase ?? client.baseUrl, timeScale };
  };
  if (mode === 'api') return connect(options.apiBase as string, options.apiKey as string);
  if (mode === 'offline') return null;
  const running = await findRunningSandbox(join(stateDir, 'sandbox.json'));
  if (running) {
    const watch = watchSandbox({
      sandbox: running,
      discoveryPath: join(stateDir, 'sandbox.json'),
      logger,
      intervalMs: options.sandboxWatchMs,
    });
    cleanups.push(async () => watch.close());
    return connect(running.apiBase, running.apiKey, undefined, running.timeScale);
  }
  const port = options.sandboxPort ?? 4302;
  const sandbox = await startEmbeddedSandbox(port, stateDir, logger);
  cleanups.push(() => sandbox.close());
  return connect(sandbox.apiBase, sandbox.apiKey, `http://127.0.0.1:${port}`);
}

/** Connects to the relay (with the token on file) and resolves with the channel's public URL. */
async function startRelay(
  { options, logger, stateDir, cleanups }: Setup,
  relayUrl: string,
  listener: Listener,
): Promise<string> {
  const relayPath = join(stateDir, 'relay.json');
  const record = await loadRelayRecord(relayPath, relayUrl, logger);
  const onRelayEvent = options.onRelayEvent ?? (() => {});
  const relay = connectRelay({
    relayUrl,
    token: record.token,
    handle: (request) => listener.handleDirect(request),
    logger,
    maxDisconnectedMs: options.relayMaxDisconnectedMs,
    onConnected: (url) => onRelayEvent({ state: 'connected', publicUrl: url }),
    onDisconnected: (reason) => onRelayEvent({ state: 'disconnected', reason }),
    onReplaced: (message) => onRelayEvent({ state: 'replaced', message }),
    onGiveUp: () => onRelayEvent({ state: 'gave-up' }),
  });
  cleanups.push(() => relay.close());
  const publicUrl = await relay.ready;
  await saveRelayRecord(relayPath, { ...record, publicUrl });
  return publicUrl;
}

/**
 * The endpoint deliveries come through: the one named, or one registered for `url` (the public URL, or in
 * the sandbox this listener's own, `listenerUrl`); and its secret.
 */
async function setUpEndpoint(
  setup: Setup,
  api: Api | null,
  url: string | null,
  listenerUrl: string,
): Promise<{ endpoint: WebhookEndpoint | null; secret: string | null; secretCommand: string | null; kept: boolean }> {
  const { options, logger, stateDir, cleanups } = setup;
  const given = options.secret ?? null;
  if (!api) return { endpoint: null, secret: given, secretCommand: null, kept: false };
  const { client, recordsBase } = api;
  if (options.endpointId !== undefined)
    return { endpoint: await client.getEndpoint(options.endpointId), secret: given, secretCommand: null, kept: false };
  if (!url) {
    logger.warn(
      'No --public-url: no endpoint registered, so the service will not send here. Pass the tunnel URL that reaches this listener with --public-url.',
    );
    return { endpoint: null, secret: given, secretCommand: null, kept: false };
  }
  const recordsPath = join(stateDir, 'endpoints.json');
  const kept = keepsEndpoint(options, setup.mode);
  // Only this process can listen on its own address now: an endpoint kept for it under another --path, or
  // one it moved to a relay's URL, is this one's, moved (not a second one that would get every event too).
  const sandbox = setup.mode === 'sandbox';
  const movable = sandbox
    ? (earlier: EndpointRecordOnFile) => sameOrigin(earlier.listener ?? earlier.url, listenerUrl)
    : undefined;
  const sameApi = sandbox ? isSandboxBase : undefined;
  const registered = await registerEndpoint({
    client,
    apiBase: recordsBase,
    url,
    events: options.events ?? ['*'],
    kept,
    movable,
    listener: sandbox ? listenerUrl : undefined,
    sameApi,
    recordsPath,
    logger,
  });
  if (!kept)
    cleanups.push(() => releaseEndpoint({ client, apiBase: recordsBase, id: registered.endpoint.id, recordsPath }));
  if (sandbox)
    await adviseOnOtherEndpoints(client, recordsPath, registered.endpoint.id, listenerUrl, logger).catch(() => {});
  const secretCommand =
    given === null ? `npx clockhook secret${registered.recordName === null ? '' : ` ${registered.recordName}`}` : null;
  return { endpoint: registered.endpoint, secret: given ?? registered.secret, secretCommand, kept };
}

/**
 * A sandbox endpoint is kept for the next run on its port, so one kept for a port no longer used (4300
 * then, 4310 now) goes on getting every event of this folder's sandbox, fails each, and is retried, as the
 * service would: noise in `events get` and the page's attempts, with no listener to show it. Another kept
 * endpoint may reach this very listener (this port's own, while a relay's endpoint made on another port is
 * the one used): every event then comes twice, the second copy signed with a secret the listener does not
 * check with. Each such endpoint, still enabled, is named once at start with the command that deletes it.
 * It is not deleted here: that port's listen may only be stopped for now, and the app may verify with
 * that endpoint's secret.
 */
async function adviseOnOtherEndpoints(
  client: ApiClient,
  recordsPath: string,
  ownId: number,
  listenerUrl: string,
  logger: Logger,
): Promise<void> {
  for (const record of await readEndpointRecords(recordsPath)) {
    if (record.id === ownId || !isSandboxBase(record.apiBase) || !URL.canParse(record.url)) continue;
    const url = new URL(record.url);
    const here = sameOrigin(record.url, listenerUrl);
    // This machine's ports only: a relay's public URL is not this listener's to probe.
    if (!here && (!isSandboxBase(url.origin) || (await isAnswering(url, 250)))) continue;
    const endpoint = await client.getEndpoint(record.id).catch(() => null);
    if (endpoint?.url !== record.url || endpoint.status !== 'enabled') continue;
    const why = here
      ? `reaches this listener too: this folder's sandbox sends it every event as well as endpoint ${ownId}, so each comes here twice, and that copy, signed with its own secret, fails and is retried. If your app verifies with endpoint ${ownId}'s secret`
      : `nothing listens on port ${url.port} now: this folder's sandbox sends it every event too, and each fails and is retried, as the service would. If you no longer use that port`;
    logger.warn(
      `Endpoint ${record.id} (${record.url}) was kept by an earlier listen, and ${why}: npx clockhook endpoints delete ${record.id}`,
    );
  }
}

/** Whether two URLs have one origin (false for one that is not a URL). */
const sameOrigin = (a: string, b: string) =>
  URL.canParse(a) && URL.canParse(b) && new URL(a).origin === new URL(b).origin;

/**
 * Whether the endpoint this run registers stays for the next run, and with it its secret, which the
 * developer's app verifies with: set once, like `stripe listen`'s. So it does when its URL is the same
 * on every run: a relay's channel, or the sandbox's endpoint for the listener's own port (not `--port 0`;
 * it lives in this folder's sandbox, so nothing outside sees it). An endpoint on the real service for a
 * tunnel URL is deleted unless `--keep-endpoint`: the URL may be gone tomorrow.
 */
function keepsEndpoint(options: ListenOptions, mode: ListenMode): boolean {
  if (options.keepEndpoint || options.relay) return true;
  return mode === 'sandbox' && (options.port ?? 4300) !== 0;
}

/** The inspector of this session, on a free port from `--inspector-port` on, closed with the session. */
async function startPage(
  { options, mode, logger, stateDir, cleanups }: Setup,
  parts: {
    store: CaptureStore;
    listener: Listener;
    api: Api | null;
    watch: EndpointWatch;
    forwardTo: URL | null;
    secret: string | null;
  },
): Promise<Inspector> {
  const { store, listener, api, watch, forwardTo, secret } = parts;
  const inspector = await startInspectorOnFreePort(options.inspectorPort ?? 4301, logger, {
    store,
    listener,
    client: api?.client ?? null,
    mode,
    forwardTo: forwardTo ? shownUrl(forwardTo) : null,
    secretHint: secret ? maskSecret(secret) : null,
    timeScale: api?.timeScale,
    tokenPath: join(stateDir, 'inspector-token'),
    logger,
    getEndpoint: () => watch.current,
    setEndpoint: (next) => watch.set(next),
    refreshEndpoint: () => watch.read(),
  });
  cleanups.push(() => inspector.close());
  if (forwardTo && (await isListenerItself(forwardTo, { host: '127.0.0.1', port: inspector.port }))) {
    throw new ListenUsageError(
      `--forward-to ${shownUrl(forwardTo)} is this listen's inspector page (port ${inspector.port}), not your app: it would answer every delivery 404. Give your app's port, such as --forward-to 3000, or move the inspector with --inspector-port.`,
    );
  }
  return inspector;
}

/**
 * `clockhook listen` as a library call: opens the capture store, starts the listener, connects to
 * the API (or an embedded sandbox), registers the endpoint and resolves once all of it is ready.
 */
export async function startListen(options: ListenOptions): Promise<ListenSession> {
  const mode = chooseMode(options);
  const forwardTo = options.forwardTo ? normalizeForwardTarget(options.forwardTo) : null;
  // The relay's channel URL reaches the listener's root; deliveries must arrive under --path. A bad --path
  // is refused here, before anything starts.
  const basePath = normalizeBasePath(options.path ?? '/');
  // Known once the endpoint is; until then there is none to watch.
  let endpointWatch: EndpointWatch | null = null;
  const setup: Setup = {
    options,
    mode,
    logger: options.logger ?? silentLogger,
    stateDir: options.stateDir ?? '.clockhook',
    cleanups: [],
    onDelivery: (report) => {
      options.onDelivery?.(report);
      if (report.source === 'delivery' && (report.status < 200 || report.status >= 300))
        endpointWatch?.deliveryFailed();
    },
  };
  const { logger, cleanups } = setup;
  const unwind = async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch((error) => logger.error(String(error)));
  };

  try {
    const { store, listener } = await startCapturing(setup, forwardTo);
    const api = await connectApi(setup);
    const client = api?.client ?? null;
    const publicUrl = options.relay
      ? `${await startRelay(setup, options.relay, listener)}${basePath === '/' ? '' : basePath}`
      : (options.publicUrl ?? null);
    const {
      endpoint: registered,
      secret,
      secretCommand,
      kept: endpointKept,
    } = await setUpEndpoint(setup, api, publicUrl ?? (mode === 'sandbox' ? listener.url : null), listener.url);
    const watch = new EndpointWatch({
      client,
      endpoint: registered,
      logger,
      now: options.now ?? Date.now,
      ...options.endpointCheck,
    });
    endpointWatch = watch;
    cleanups.push(async () => watch.close());
    listener.setSecret(secret, { printedBy: secretCommand });

    const inspector =
      options.inspector === false ? null : await startPage(setup, { store, listener, api, watch, forwardTo, secret });
    if (options.publicUrl) warnAboutPublicPath(logger, options.publicUrl, basePath);
    await warnAboutSetup(logger, secret, registered, forwardTo);
    // Ready: what arrived while listen started goes on now, checked with the secret known now.
    listener.release();

    let closing: Promise<void> | undefined;
    return {
      ready: {
        event: 'ready',
        listener: listener.url,
        inspector: inspector?.url ?? null,
        forwardTo: forwardTo ? shownUrl(forwardTo) : null,
        apiBase: client?.baseUrl ?? null,
        sandbox: mode === 'sandbox',
        endpointId: registered?.id ?? null,
        publicUrl,
      },
      mode,
      secret,
      secretCommand,
      endpointKept,
      get endpoint() {
        return watch.current;
      },
      listener,
      store,
      inspector,
      client,
      close() {
        closing ??= unwind();
        return closing;
      },
    };
  } catch (error) {
    await unwind();
    throw error;
  }
}

/**
 * A --public-url outside --path: a tunnel passes paths as they are (ngrok, cloudflared), so every delivery
 * would get 404. Said, not refused: a tunnel or proxy in front may rewrite the path.
 */
function warnAboutPublicPath(logger: Logger, publicUrl: string, basePath: string): void {
  const url = new URL(publicUrl);
  if (pathUnderBase(`${url.pathname}${url.search}`, basePath) !== null) return;
  logger.warn(
    `--public-url ${publicUrl} is outside --path ${basePath}: through a tunnel that passes paths as they are, every delivery arrives at ${url.pathname} and gets 404. Register a URL under the path instead, such as --public-url ${url.origin}${basePath}`,
  );
}

/** Says once, at start, what will not work as the developer may expect. */
async function warnAboutSetup(
  logger: Logger,
  secret: string | null,
  endpoint: WebhookEndpoint | null,
  forwardTo: URL | null,
): Promise<void> {
  if (!secret)
    logger.warn(
      'No endpoint secret known: signatures are recorded as unchecked and every request is forwarded. Pass --secret to verify them.',
    );
  if (endpoint?.status === 'disabled') {
    logger.warn(
      `Endpoint ${endpoint.id} is disabled (the service disables one after 10 failed deliveries in a row), so nothing is delivered to it. Re-enable it: npx clockhook endpoints enable ${endpoint.id}`,
    );
  }
  if (forwardTo && !(await isAnswering(forwardTo))) {
    logger.warn(
      `Nothing answers at ${shownUrl(forwardTo)} yet. Deliveries are still captured (and answered 502); start your app and replay them from the inspector.`,
    );
  }
}

function startInspectorOnFreePort(
  port: number,
  logger: Logger,
  options: Parameters<typeof startInspector>[0],
): Promise<Inspector> {
  return onPortOrFree(
    port,
    (p) => startInspector({ ...options, port: p }),
    (p) => logger.warn(`Port ${p} is taken; the inspector uses a free port instead (see its URL below).`),
  );
}

function startEmbeddedSandbox(port: number, stateDir: string, logger: Logger): Promise<Sandbox> {
  const options = {
    host: '127.0.0.1',
    dbPath: join(stateDir, 'sandbox-db.json'),
    discoveryPath: join(stateDir, 'sandbox.json'),
    logger,
  };
  return onPortOrFree(
    port,
    (p) => startSandbox({ ...options, port: p }),
    (p) =>
      logger.warn(
        `Port ${p} is taken; the embedded sandbox uses a free port instead (other commands find it through ${join(stateDir, 'sandbox.json')}).`,
      ),
  );
}
