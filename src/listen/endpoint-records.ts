import type { WebhookEndpoint } from '../contract/index.js';
import type { EndpointRecordOnFile } from '../folder/index.js';

/**
 * Endpoints listen creates carry one of these descriptions, so a later run recognizes them and whoever
 * lists the endpoints can tell what will become of them.
 */
export const ENDPOINT_DESCRIPTION = 'clockhook listen (created automatically; deleted when it exits)';
export const KEPT_ENDPOINT_DESCRIPTION = 'clockhook listen (created automatically; kept for its next run)';

export const isListenEndpoint = (endpoint: WebhookEndpoint) =>
  endpoint.description === ENDPOINT_DESCRIPTION || endpoint.description === KEPT_ENDPOINT_DESCRIPTION;

/**
 * An API base this folder's sandbox may have had: it listens on this machine (an embedded one's records
 * carry the port asked for, 0 included), on whatever port it was given.
 */
export const isSandboxBase = (apiBase: string) =>
  /^http:\/\/(127\.0\.0\.1|localhost|\[::1\]|0\.0\.0\.0|\[::\]):\d+$/.test(apiBase);

/** An API base as the API client spells it (`https://api.example.com/` and `…com` are one API). */
const baseOf = (apiBase: string) => (URL.canParse(apiBase) ? new URL(apiBase).href.replace(/\/+$/, '') : apiBase);

/** Whether two API bases, as given or as filed, name the same API. */
export const sameBase = (a: string, b: string) => baseOf(a) === baseOf(b);

/** The argument that picks `record` among `records` for `clockhook secret`; null when there is no other. */
export function recordName(records: EndpointRecordOnFile[], record: EndpointRecordOnFile): string | null {
  const others = records.filter((r) => r !== record);
  if (others.length === 0) return null;
  return others.some((r) => r.id === record.id) ? record.url : String(record.id);
}
