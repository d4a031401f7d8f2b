// A listen session's inspector page: on `--inspector-port` or a free one, its token kept by the folder's keeper.
import { maskSecret } from '../contract/index.js';
import { folderFiles, writeToken } from '../folder/index.js';
import { type Inspector, startInspector } from '../inspector/index.js';
import type { Listener } from '../listener/index.js';
import { onPortOrFree } from '../http/index.js';
import type { CaptureStore } from '../store/index.js';
import type { EndpointWatch } from './endpoint-watch.js';
import type { MissedList } from './missed-list.js';
import type { Api, Setup } from './session.js';
import { appOf, refuseOwnAddress, routeNames } from './targets.js';

/** What the page shows and acts on. */
export interface PageParts {
  store: CaptureStore;
  listener: Listener;
  api: Api | null;
  watch: EndpointWatch;
  secret: string | null;
  missed: MissedList;
}

/** The inspector of this session, on a free port from `--inspector-port` on, closed with the session. */
export async function startPage(setup: Setup, parts: PageParts): Promise<Inspector> {
  const { config, logger, stateDir, cleanups, keeper } = setup;
  const { store, listener, api, watch, secret, missed } = parts;
  const tokenPath = folderFiles(stateDir).token;
  const options = {
    store,
    listener,
    client: api?.client ?? null,
    mode: config.mode,
    forwardTo: routeNames(config.targets)?.join('; ') ?? appOf(config.targets),
    traceUrl: config.traceUrl,
    secretHint: secret ? maskSecret(secret) : null,
    timeScale: api?.timeScale,
    tokenPath,
    logger,
    getEndpoint: () => watch.current,
    getMissed: () => missed.list,
    catchUp: (yes: boolean) => missed.fromPage(yes),
    setEndpoint: (next: Parameters<EndpointWatch['set']>[0]) => watch.set(next),
    refreshEndpoint: () => watch.read(),
  };
  const inspector = await onPortOrFree(
    config.inspectorPort,
    (port) => startInspector({ ...options, port }),
    (port) => logger.warn(`Port ${port} is taken; the inspector uses a free port instead (see its URL below).`),
  );
  cleanups.push(() => inspector.close());
  const token = new URL(inspector.url).searchParams.get('token') ?? '';
  const unkeep = keeper.keep({
    what: "the page's token (inspector-token)",
    paths: [tokenPath],
    write: () => writeToken(tokenPath, token),
  });
  cleanups.push(async () => unkeep());
  setup.appState.add((event) => inspector.showApp(event));
  await refuseOwnAddress(config.targets, { host: '127.0.0.1', port: inspector.port }, 'inspector');
  return inspector;
}
