import { connect } from 'node:net';
import type { ApiClient } from '../api/index.js';
import type { WebhookEndpoint } from '../contract/index.js';
import type { Logger } from '../logger.js';
import { pathUnderBase } from '../listener/index.js';
import { shownUrl } from '../http/index.js';
import { isSandboxBase } from './endpoint-records.js';
import { DISABLES_AFTER } from '../story/index.js';
import { readEndpointRecords } from '../folder/index.js';

/** Whether something accepts a TCP connection at the URL's host and port. */
export async function isAnswering(url: URL, timeoutMs = 1000): Promise<boolean> {
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
export async function adviseOnOtherEndpoints(
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
export const sameOrigin = (a: string, b: string) =>
  URL.canParse(a) && URL.canParse(b) && new URL(a).origin === new URL(b).origin;

/**
 * A --public-url outside --path: a tunnel passes paths as they are (ngrok, cloudflared), so every delivery
 * would get 404. Said, not refused: a tunnel or proxy in front may rewrite the path.
 */
export function warnAboutPublicPath(logger: Logger, publicUrl: string, basePath: string): void {
  const url = new URL(publicUrl);
  if (pathUnderBase(`${url.pathname}${url.search}`, basePath) !== null) return;
  logger.warn(
    `--public-url ${publicUrl} is outside --path ${basePath}: through a tunnel that passes paths as they are, every delivery arrives at ${url.pathname} and gets 404. Register a URL under the path instead, such as --public-url ${url.origin}${basePath}`,
  );
}

/** Says once, at start, what will not work as the developer may expect. */
export async function warnAboutSetup(
  logger: Logger,
  secret: string | null,
  endpoint: WebhookEndpoint | null,
  targets: { label: string; url: URL }[],
  waitForAppMs: number,
): Promise<void> {
  if (!secret)
    logger.warn(
      'No endpoint secret known: signatures are recorded as unchecked and every request is forwarded. Pass --secret to verify them.',
    );
  if (endpoint?.status === 'disabled') {
    logger.warn(
      `Endpoint ${endpoint.id} is disabled (${DISABLES_AFTER}), so nothing is delivered to it. Re-enable it: npx clockhook endpoints enable ${endpoint.id}`,
    );
  }
  for (const { label, url } of targets) {
    if (await isAnswering(url)) continue;
    const which = targets.length > 1 ? ` (${label})` : '';
    // As the listener does it: with --wait-for-app, a delivery is held for the app before it gets its 502.
    const meanwhile =
      waitForAppMs > 0
        ? `Deliveries are still captured, held up to ${waitForAppMs / 1000} s each for the app (--wait-for-app), then answered 502`
        : 'Deliveries are still captured (and answered 502)';
    logger.warn(
      `Nothing answers at ${shownUrl(url)}${which} yet. ${meanwhile}; start your app and replay them from the inspector.`,
    );
  }
}
