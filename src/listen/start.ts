import { isTaken } from '../contract/index.js';
import { explained } from '../errors.js';
import { FolderKeeper } from '../folder/index.js';
import type { Inspector } from '../inspector/index.js';
import { connectApi } from './api-link.js';
import { startCapturing } from './capturing.js';
import { setUpEndpoint } from './endpoint-setup.js';
import { EndpointWatch } from './endpoint-watch.js';
import { MissedList } from './missed-list.js';
import { type ListenConfig, listenConfig, type ListenOptions } from './options.js';
import { startPage } from './page.js';
import { startRelay } from './relay-link.js';
import { keepListenDiscovery } from './restore.js';
import type { ListenSession, Setup } from './session.js';
import { appOf, routeNames } from './targets.js';
import { warnAboutPublicPath, warnAboutSetup } from './warnings.js';

/** The first steps of a session, before its page: what deliveries arrive through and are checked with. */
async function startDeliveries(setup: Setup) {
  const { config } = setup;
  const { store, listener } = await startCapturing(setup);
  const api = await connectApi(setup);
  const publicUrl = config.relay
    ? `${await startRelay(setup, config.relay, listener)}${config.basePath === '/' ? '' : config.basePath}`
    : (config.publicUrl ?? null);
  const endpointUrl = publicUrl ?? (config.mode === 'sandbox' ? listener.url : null);
  const registered = await setUpEndpoint(setup, api, endpointUrl, listener.url);
  const watch = new EndpointWatch({
    client: api?.client ?? null,
    endpoint: registered.endpoint,
    logger: setup.logger,
    now: config.now,
    ...config.endpointCheck,
  });
  setup.cleanups.push(async () => watch.close());
  listener.setSecret(registered.secret, { printedBy: registered.secretCommand });
  return { store, listener, api, publicUrl, registered, watch };
}

/** The session a started listen is, from what its steps made. */
function sessionOf(
  config: ListenConfig,
  parts: Awaited<ReturnType<typeof startDeliveries>> & { inspector: Inspector | null; missed: MissedList },
  close: () => Promise<void>,
): ListenSession {
  const { listener, api, registered, watch, inspector } = parts;
  const routes = routeNames(config.targets);
  return {
    ready: {
      event: 'ready',
      listener: listener.url,
      inspector: inspector?.url ?? null,
      forwardTo: appOf(config.targets),
      ...(routes ? { routes } : {}),
      apiBase: api?.client.baseUrl ?? null,
      sandbox: config.mode === 'sandbox',
      endpointId: registered.endpoint?.id ?? null,
      publicUrl: parts.publicUrl,
      ...(listener.injector ? { faults: listener.injector.describe() } : {}),
      ...(config.tracing ? { tracing: config.tracing } : {}),
    },
    mode: config.mode,
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

/** What the set-up steps share; a delivery the sender was not told 2xx for calls `deliveryFailed`. */
function setupOf(config: ListenConfig, deliveryFailed: () => void): Setup {
  const { logger, stateDir } = config;
  // The one keeper of the folder, stopped last (cleanups run in reverse).
  const keeper = new FolderKeeper({ dir: stateDir, logger });
  return {
    config,
    logger,
    stateDir,
    cleanups: [() => keeper.stop()],
    keeper,
    onDelivery: (report) => {
      config.onDelivery(report);
      // Judged by the story (a 200 cut short failed too); a request refused before it was captured has none.
      const failed = report.story ? report.story.outcome !== '2xx' : !isTaken(report.status);
      if (report.source === 'delivery' && failed) deliveryFailed();
    },
    appState: new Set([config.onAppState]),
  };
}

/**
 * `clockhook listen` as a library call: opens the capture store, starts the listener, connects to
 * the API (or an embedded sandbox), registers the endpoint and resolves once all of it is ready.
 */
export async function startListen(options: ListenOptions): Promise<ListenSession> {
  // Every default and check at once, before anything starts (a bad --path, a route, a combination).
  const config = listenConfig(options);
  const startedAt = config.now();
  // Known once the endpoint is; until then there is none to watch.
  let endpointWatch: EndpointWatch | null = null;
  const setup = setupOf(config, () => endpointWatch?.deliveryFailed());
  const { logger, cleanups } = setup;
  const unwind = async () => {
    for (const cleanup of cleanups.splice(0).reverse())
      await cleanup().catch((error: unknown) => logger.error(`clockhook: ${explained(error)}`));
  };
  try {
    const started = await startDeliveries(setup);
    const { store, listener, api, registered, watch } = started;
    endpointWatch = watch;
    const { secret } = registered;
    const missed = new MissedList();
    const inspector = config.inspector ? await startPage(setup, { store, listener, api, watch, secret, missed }) : null;
    if (config.publicUrl) warnAboutPublicPath(logger, config.publicUrl, config.basePath);
    const waitedFor = config.startsApp ? [] : config.targets.all;
    await warnAboutSetup(logger, secret, registered.endpoint, waitedFor, config.waitForAppMs);
    // Ready: what arrived while listen started goes on now, checked with the secret known now.
    listener.release();
    const found = {
      ...{ listener: listener.url, inspector: inspector?.url ?? null, db: config.dbPath, startedAt },
      ...(config.mode === 'offline' ? { offline: true as const } : {}),
    };
    await keepListenDiscovery(setup, found);
    const timeScale = api?.timeScale ?? 1;
    const { existed } = registered;
    const client = api?.client ?? null;
    missed.attach({ client, endpoint: () => watch.current, existed, timeScale, startedAt, store, inspector, logger });
    let closing: Promise<void> | undefined;
    return sessionOf(config, { ...started, inspector, missed }, () => (closing ??= unwind()));
  } catch (error) {
    await unwind();
    throw error;
  }
}
