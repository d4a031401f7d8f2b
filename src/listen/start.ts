import type { TracingConfig } from '../tracing/config.js';
import { startTracing } from '../tracing/start.js';
import { ApiClient } from '../api/index.js';
import { isTaken, maskSecret } from '../contract/index.js';
import { type Inspector, startInspector } from '../inspector/index.js';
import { type Logger, silentLogger } from '../logger.js';
import { DEFAULT_WAIT_FOR_APP_MS, Listener, normalizeBasePath } from '../listener/index.js';
import { onPortOrFree, shownUrl } from '../net.js';
import { connectRelay, relayRecordFor } from '../relay/index.js';
import { type Sandbox, startSandbox } from '../sandbox/index.js';
import { CaptureStore } from '../store/index.js';
import { keepListenDiscovery } from './restore.js';
import { setUpEndpoint } from './endpoint-setup.js';
import { EndpointWatch } from './endpoint-watch.js';
import { type Api, chooseMode, type ListenOptions, type ListenSession, type Setup } from './options.js';
import { MissedList } from './missed-list.js';
import { watchSandbox } from './sandbox-watch.js';
import { refuseOwnAddress, routeNames, type Targets, targetsOf } from './targets.js';
import { warnAboutPublicPath, warnAboutSetup } from './warnings.js';
import {
  findRunningSandbox,
  FolderKeeper,
  folderFiles,
  saveRelayRecord,
  STATE_DIR,
  writeToken,
} from '../folder/index.js';

async function startCapturing(setup: Setup, targets: Targets): Promise<{ store: CaptureStore; listener: Listener }> {
  const { options, logger, stateDir, cleanups } = setup;
  const store = await CaptureStore.open({
    path: options.dbPath ?? folderFiles(stateDir).captures,
    maxCaptures: options.maxCaptures,
    logger,
    now: options.now,
    keeper: setup.keeper,
  });
  cleanups.push(() => store.close());
  // Pushed before the listener: it shuts down (exporting the last spans) once the listener has closed.
  const tracer = options.tracing ? await startTracer(options.tracing, setup) : null;
  const listener = new Listener({
    store,
    forwardTo: targets.forwardTo,
    routes: targets.routes,
    port: options.port ?? 4300,
    host: options.host,
    path: options.path,
    secret: options.secret ?? null,
    skipVerify: options.skipVerify,
    tolerance: options.tolerance,
    timeoutMs: options.timeoutMs,
    waitForAppMs: options.waitForAppMs ?? DEFAULT_WAIT_FOR_APP_MS,
    onAppState: (event) => setup.onAppState(event),
    faults: options.faults,
    tracer,
    maxBufferedBytes: options.maxBufferedBytes,
    now: options.now,
    logger,
    onDelivery: setup.onDelivery,
    // Until the endpoint and its secret are known (released in startListen).
    held: true,
  });
  await listener.start();
  cleanups.push(() => listener.close());
  await refuseOwnAddress(targets, { host: options.host ?? '127.0.0.1', port: listener.port }, 'listener');
  return { store, listener };
}

/**
 * The real API, the sandbox already running in this folder, or an embedded one; none offline. With
 * it, the API base its endpoints are recorded under in endpoints.json: its own, except for an embedded
 * sandbox, which may find its port taken and run on another one over the same state file. It is the
 * same API, so its records stay under the port asked for; else a relay's endpoint would be created
 * again, with a new secret, whenever port 4302 happened to be busy.
 */
async function connectApi({ options, mode, logger, stateDir, cleanups, keeper }: Setup): Promise<Api | null> {
  const connect = (baseUrl: string, apiKey: string, recordsBase?: string, timeScale = 1) => {
    const client = new ApiClient({ baseUrl, apiKey, logger });
    // As the client spells it: `--api-base https://api.example.com/` one day and without the slash the next is one API.
    return { client, recordsBase: recordsBase ?? client.baseUrl, timeScale };
  };
  if (mode === 'api') return connect(options.apiBase as string, options.apiKey as string);
  if (mode === 'offline') return null;
  const files = folderFiles(stateDir);
  const running = await findRunningSandbox(files.sandbox);
  if (running) {
    const watch = watchSandbox({
      sandbox: running,
      discoveryPath: files.sandbox,
      logger,
      intervalMs: options.sandboxWatchMs,
    });
    cleanups.push(async () => watch.close());
    if (options.timeScale !== undefined && options.timeScale !== (running.timeScale ?? 1))
      logger.warn(
        `A sandbox already runs in this folder (${running.apiBase}) with its own time scale (${running.timeScale ?? 1}): --time-scale applies to a sandbox listen starts. Stop that one, or start it with npx clockhook sandbox --time-scale ${options.timeScale}.`,
      );
    return connect(running.apiBase, running.apiKey, undefined, running.timeScale);
  }
  const port = options.sandboxPort ?? 4302;
  const timeScale = options.timeScale ?? 1;
  const sandbox = await startEmbeddedSandbox(port, { stateDir, logger, keeper }, timeScale);
  cleanups.push(() => sandbox.close());
  return connect(sandbox.apiBase, sandbox.apiKey, `http://127.0.0.1:${port}`, timeScale);
}

/** Connects to the relay (with the token on file) and resolves with the channel's public URL. */
async function startRelay(
  { options, logger, stateDir, cleanups, keeper }: Setup,
  relayUrl: string,
  listener: Listener,
): Promise<string> {
  const relayPath = folderFiles(stateDir).relay;
  const record = await relayRecordFor(relayPath, relayUrl, logger);
  const onRelayEvent = options.onRelayEvent ?? (() => {});
  const relay = connectRelay({
    relayUrl,
    token: record.token,
    relayKey: options.relayKey,
    handle: (request) => listener.handleDirect(request),
    logger,
    maxDisconnectedMs: options.relayMaxDisconnectedMs,
    onConnected: (url) => onRelayEvent({ state: 'connected', publicUrl: url }),
    onDisconnected: (reason) => onRelayEvent({ state: 'disconnected', reason }),
    onReplaced: (message) => onRelayEvent({ state: 'replaced', message }),
    onRefused: (message) => onRelayEvent({ state: 'refused', message }),
    onGiveUp: () => onRelayEvent({ state: 'gave-up' }),
  });
  cleanups.push(() => relay.close());
  const publicUrl = await relay.ready;
  const save = () => saveRelayRecord(relayPath, { ...record, publicUrl });
  await save();
  const unkeep = keeper.keep({ what: 'the relay channel (relay.json)', paths: [relayPath], write: save });
  cleanups.push(async () => unkeep());
  return publicUrl;
}

/** The inspector of this session, on a free port from `--inspector-port` on, closed with the session. */
async function startPage(
  { options, mode, logger, stateDir, cleanups, keeper }: Setup,
  parts: {
    store: CaptureStore;
    listener: Listener;
    api: Api | null;
    watch: EndpointWatch;
    targets: Targets;
    secret: string | null;
    missed: MissedList;
  },
): Promise<Inspector> {
  const { store, listener, api, watch, targets, secret, missed } = parts;
  const tokenPath = folderFiles(stateDir).token;
  const inspector = await startInspectorOnFreePort(options.inspectorPort ?? 4301, logger, {
    store,
    listener,
    client: api?.client ?? null,
    mode,
    forwardTo: routeNames(targets)?.join('; ') ?? (targets.forwardTo ? shownUrl(targets.forwardTo) : null),
    traceUrl: options.traceUrl,
    secretHint: secret ? maskSecret(secret) : null,
    timeScale: api?.timeScale,
    tokenPath,
    logger,
    getEndpoint: () => watch.current,
    getMissed: () => missed.list,
    catchUp: (yes) => missed.fromPage(yes),
    setEndpoint: (next) => watch.set(next),
    refreshEndpoint: () => watch.read(),
  });
  cleanups.push(() => inspector.close());
  const token = new URL(inspector.url).searchParams.get('token') ?? '';
  const unkeep = keeper.keep({
    what: "the page's token (inspector-token)",
    paths: [tokenPath],
    write: () => writeToken(tokenPath, token),
  });
  cleanups.push(async () => unkeep());
  await refuseOwnAddress(targets, { host: '127.0.0.1', port: inspector.port }, 'inspector');
  return inspector;
}

/** The first steps of a session, before its page: what deliveries arrive through and are checked with. */
async function startDeliveries(setup: Setup, targets: Targets, basePath: string) {
  const { options, mode } = setup;
  const { store, listener } = await startCapturing(setup, targets);
  const api = await connectApi(setup);
  const publicUrl = options.relay
    ? `${await startRelay(setup, options.relay, listener)}${basePath === '/' ? '' : basePath}`
    : (options.publicUrl ?? null);
  const endpointUrl = publicUrl ?? (mode === 'sandbox' ? listener.url : null);
  const registered = await setUpEndpoint(setup, api, endpointUrl, listener.url);
  const watch = new EndpointWatch({
    client: api?.client ?? null,
    endpoint: registered.endpoint,
    logger: setup.logger,
    now: options.now ?? Date.now,
    ...options.endpointCheck,
  });
  setup.cleanups.push(async () => watch.close());
  listener.setSecret(registered.secret, { printedBy: registered.secretCommand });
  return { store, listener, api, publicUrl, registered, watch };
}

/** The session a started listen is, from what its steps made. */
function sessionOf(
  parts: Awaited<ReturnType<typeof startDeliveries>> & {
    mode: Setup['mode'];
    targets: Targets;
    inspector: Inspector | null;
    missed: MissedList;
    tracing: TracingConfig | null;
  },
  close: () => Promise<void>,
): ListenSession {
  const { listener, api, registered, watch, targets, inspector, mode } = parts;
  return {
    ready: {
      event: 'ready',
      listener: listener.url,
      inspector: inspector?.url ?? null,
      forwardTo: targets.forwardTo ? shownUrl(targets.forwardTo) : null,
      ...(targets.routes ? { routes: routeNames(targets) } : {}),
      apiBase: api?.client.baseUrl ?? null,
      sandbox: mode === 'sandbox',
      endpointId: registered.endpoint?.id ?? null,
      publicUrl: parts.publicUrl,
      ...(listener.injector ? { faults: listener.injector.describe() } : {}),
      ...(parts.tracing ? { tracing: parts.tracing } : {}),
    },
    mode,
    secret: registered.secret,
    secretCommand: registered.secretCommand,
    endpointKept: registered.kept,
    endpointExisted: registered.existed,
    timeScale: api?.timeScale ?? 1,
    get endpoint() {
      return watch.current;
    },
    listener,
    store: parts.store,
    inspector,
    client: api?.client ?? null,
    findMissed: () => parts.missed.find(),
    catchUp: (confirm, say) => parts.missed.catchUp(confirm, say),
    close,
  };
}

/** Tracing's spans exporter, loaded only now (startTracing): with tracing off, nothing of OpenTelemetry is loaded. */
async function startTracer(config: TracingConfig, setup: Setup) {
  const tracer = await startTracing(config, (event) => setup.options.onTracing?.(event));
  setup.cleanups.push(() => tracer.shutdown());
  return tracer;
}

/** What the set-up steps share; a delivery the sender was not told 2xx for calls `deliveryFailed`. */
function setupOf(options: ListenOptions, mode: Setup['mode'], deliveryFailed: () => void): Setup {
  const logger = options.logger ?? silentLogger;
  const stateDir = options.stateDir ?? STATE_DIR;
  // The one keeper of the folder, stopped last (cleanups run in reverse).
  const keeper = new FolderKeeper({ dir: stateDir, logger });
  return {
    options,
    mode,
    logger,
    stateDir,
    cleanups: [() => keeper.stop()],
    keeper,
    onDelivery: (report) => {
      options.onDelivery?.(report);
      if (report.source === 'delivery' && !isTaken(report.status)) deliveryFailed();
    },
    onAppState: (event) => options.onAppState?.(event),
  };
}

/**
 * `clockhook listen` as a library call: opens the capture store, starts the listener, connects to
 * the API (or an embedded sandbox), registers the endpoint and resolves once all of it is ready.
 */
export async function startListen(options: ListenOptions): Promise<ListenSession> {
  const startedAt = (options.now ?? Date.now)();
  const mode = chooseMode(options);
  const targets = targetsOf(options);
  // The relay's channel URL reaches the listener's root; deliveries must arrive under --path. A bad --path
  // is refused here, before anything starts.
  const basePath = normalizeBasePath(options.path ?? '/');
  // Known once the endpoint is; until then there is none to watch.
  let endpointWatch: EndpointWatch | null = null;
  const setup = setupOf(options, mode, () => endpointWatch?.deliveryFailed());
  const { logger, cleanups } = setup;
  const unwind = async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch((error) => logger.error(String(error)));
  };
  try {
    const started = await startDeliveries(setup, targets, basePath);
    const { store, listener, api, registered, watch } = started;
    endpointWatch = watch;
    const { secret } = registered;
    const missed = new MissedList();
    const inspector =
      options.inspector === false
        ? null
        : await startPage(setup, { store, listener, api, watch, targets, secret, missed });
    if (inspector) {
      const toTerminal = setup.onAppState;
      setup.onAppState = (event) => {
        toTerminal(event);
        inspector.showApp(event);
      };
    }
    if (options.publicUrl) warnAboutPublicPath(logger, options.publicUrl, basePath);
    const waitForAppMs = options.waitForAppMs ?? DEFAULT_WAIT_FOR_APP_MS;
    await warnAboutSetup(logger, secret, registered.endpoint, targets.all, waitForAppMs);
    // Ready: what arrived while listen started goes on now, checked with the secret known now.
    listener.release();
    const db = options.dbPath ?? folderFiles(setup.stateDir).captures;
    await keepListenDiscovery(setup, { listener: listener.url, inspector: inspector?.url ?? null, db, startedAt });
    let closing: Promise<void> | undefined;
    const timeScale = api?.timeScale ?? 1;
    const { existed } = registered;
    const client = api?.client ?? null;
    missed.attach({ client, endpoint: () => watch.current, existed, timeScale, startedAt, store, inspector, logger });
    const tracing = options.tracing ?? null;
    return sessionOf({ ...started, mode, targets, inspector, missed, tracing }, () => (closing ??= unwind()));
  } catch (error) {
    await unwind();
    throw error;
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

function startEmbeddedSandbox(
  port: number,
  { stateDir, logger, keeper }: Pick<Setup, 'stateDir' | 'logger' | 'keeper'>,
  timeScale: number,
): Promise<Sandbox> {
  const files = folderFiles(stateDir);
  const options = {
    host: '127.0.0.1',
    timeScale,
    dbPath: files.sandboxState,
    discoveryPath: files.sandbox,
    logger,
    keeper,
  };
  return onPortOrFree(
    port,
    (p) => startSandbox({ ...options, port: p }),
    (p) =>
      logger.warn(
        `Port ${p} is taken; the embedded sandbox uses a free port instead (other commands find it through ${files.sandbox}).`,
      ),
  );
}
