import type { WebhookEndpoint } from '../contract/index.js';
import { isSandboxBase } from './endpoint-records.js';
import type { ListenConfig } from './options.js';
import type { Api, Setup } from './session.js';
import { registerEndpoint, releaseEndpoint } from './register.js';
import { adviseOnOtherEndpoints, sameOrigin } from './warnings.js';
import { type EndpointRecordOnFile, folderFiles, refileEndpointRecords } from '../folder/index.js';

/** The endpoint of a run, its secret and the command that prints it, and what becomes of it. */
export interface EndpointSetUp {
  endpoint: WebhookEndpoint | null;
  secret: string | null;
  secretCommand: string | null;
  kept: boolean;
  existed: boolean;
}

/**
 * The endpoint deliveries come through: the one named, or one registered for `url` (the public URL, or in
 * the sandbox this listener's own, `listenerUrl`); and its secret.
 */
export async function setUpEndpoint(
  setup: Setup,
  api: Api | null,
  url: string | null,
  listenerUrl: string,
): Promise<EndpointSetUp> {
  const { config, logger } = setup;
  const given = config.secret;
  const none: EndpointSetUp = { endpoint: null, secret: given, secretCommand: null, kept: false, existed: false };
  if (!api) return none;
  if (config.endpointId !== undefined)
    return { ...none, endpoint: await api.client.getEndpoint(config.endpointId), existed: true };
  if (!url) {
    logger.warn(
      'No --public-url: no endpoint registered, so the service will not send here. Pass the tunnel URL that reaches this listener with --public-url.',
    );
    return none;
  }
  const { registered, kept } = await registerHere(setup, api, url, listenerUrl);
  const secretCommand =
    given === null ? `npx clockhook secret${registered.recordName === null ? '' : ` ${registered.recordName}`}` : null;
  return {
    endpoint: registered.endpoint,
    secret: given ?? registered.secret,
    secretCommand,
    kept,
    existed: registered.existed,
  };
}

/**
 * Registers the endpoint for `url`, or reuses or moves the one on file (see registerEndpoint); its secret is
 * kept by the folder's keeper; one this run does not keep is deleted when it ends.
 */
async function registerHere(setup: Setup, { client, recordsBase }: Api, url: string, listenerUrl: string) {
  const { config, logger, stateDir, cleanups } = setup;
  const recordsPath = folderFiles(stateDir).endpoints;
  const kept = keepsEndpoint(config);
  // Only this process can listen on its own address now: an endpoint kept for it under another --path, or
  // one it moved to a relay's URL, is this one's, moved (not a second one that would get every event too).
  const sandbox = config.mode === 'sandbox';
  const movable = sandbox
    ? (earlier: EndpointRecordOnFile) => sameOrigin(earlier.listener ?? earlier.url, listenerUrl)
    : undefined;
  const registered = await registerEndpoint({
    ...{ client, apiBase: recordsBase, url, events: config.events, kept, movable },
    ...{ listener: sandbox ? listenerUrl : undefined, sameApi: sandbox ? isSandboxBase : undefined },
    ...{ recordsPath, logger },
  });
  setup.keeper.keep({
    what: 'the endpoints and their secrets (endpoints.json)',
    paths: [],
    write: () => refileEndpointRecords(recordsPath, registered.records),
  });
  if (!kept)
    cleanups.push(() => releaseEndpoint({ client, apiBase: recordsBase, id: registered.endpoint.id, recordsPath }));
  if (sandbox)
    await adviseOnOtherEndpoints(client, recordsPath, registered.endpoint.id, listenerUrl, logger).catch(() => {});
  return { registered, kept };
}

/**
 * Whether the endpoint this run registers stays for the next run, and with it its secret, which the
 * developer's app verifies with: set once, like `stripe listen`'s. So it does when its URL is the same
 * on every run: a relay's channel, or the sandbox's endpoint for the listener's own port (not `--port 0`;
 * it lives in this folder's sandbox, so nothing outside sees it). An endpoint on the real service for a
 * tunnel URL is deleted unless `--keep-endpoint`: the URL may be gone tomorrow.
 */
function keepsEndpoint(config: ListenConfig): boolean {
  if (config.keepEndpoint || config.relay) return true;
  return config.mode === 'sandbox' && config.port !== 0;
}
