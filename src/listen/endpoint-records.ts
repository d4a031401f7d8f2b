import { readFile } from 'node:fs/promises';
import type { WebhookEndpoint } from '../contract/index.js';
import { writePrivateFile } from '../store/index.js';
import { ClockhookError } from '../errors.js';

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

/** `.clockhook/endpoints.json`: endpoints listen registered, with the secret only the create response had. */
export interface EndpointRecordOnFile {
  apiBase: string;
  url: string;
  id: number;
  secret: string;
  createdAt: string;
  /**
   * The URL of the listener the endpoint delivers to, when the endpoint's own URL is elsewhere (a relay's
   * channel): a later run of that listener finds its endpoint by it, and moves it back. Sandbox only.
   */
  listener?: string;
}

/** Whether two records, read at different times, are the same one. */
export const sameRecord = (a: EndpointRecordOnFile, b: EndpointRecordOnFile) =>
  a.apiBase === b.apiBase && a.id === b.id && a.url === b.url;

/** The argument that picks `record` among `records` for `clockhook secret`; null when there is no other. */
export function recordName(records: EndpointRecordOnFile[], record: EndpointRecordOnFile): string | null {
  const others = records.filter((r) => r !== record);
  if (others.length === 0) return null;
  return others.some((r) => r.id === record.id) ? record.url : String(record.id);
}

/** `.clockhook/endpoints.json` exists but cannot be read as the records listen wrote. */
export class EndpointRecordsError extends ClockhookError {
  override readonly name = 'EndpointRecordsError';
  readonly exitCode = 1;
}

const isRecord = (value: unknown): value is EndpointRecordOnFile => {
  const r = value as Partial<EndpointRecordOnFile> | null;
  return (
    typeof r === 'object' &&
    r !== null &&
    typeof r.apiBase === 'string' &&
    typeof r.url === 'string' &&
    Number.isInteger(r.id) &&
    typeof r.secret === 'string'
  );
};

/**
 * The records in `.clockhook/endpoints.json`; none when it does not exist. One that cannot be read (a
 * hand edit gone wrong) is an error, not "none": taken as empty, it would be overwritten, and listen
 * would delete the endpoints whose secrets it held and make new ones, so the app's secret stops working.
 */
export async function readEndpointRecords(path: string): Promise<EndpointRecordOnFile[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw recordsError(path, (error as Error).message);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw recordsError(path, `it is not valid JSON: ${(error as Error).message}`);
  }
  if (!Array.isArray(value)) throw recordsError(path, 'it does not hold a list');
  const bad = value.findIndex((entry) => !isRecord(entry));
  if (bad !== -1) throw recordsError(path, `entry ${bad + 1} lacks its apiBase, url, id or secret`);
  return value as EndpointRecordOnFile[];
}

const recordsError = (path: string, why: string) =>
  new EndpointRecordsError(
    `cannot read ${path} (${why}). It holds the secrets of the endpoints clockhook listen registered, which the service shows nowhere else: mend it, or move it aside, and listen then registers new endpoints, with new secrets for your app.`,
  );

const writeRecords = (path: string, records: EndpointRecordOnFile[]) =>
  writePrivateFile(path, `${JSON.stringify(records, null, 2)}\n`);

/**
 * Puts `record` on file in place of the ones `replaces` picks, over the records as they are now: another
 * listen of this folder (another port, another --db) may have written its own while this one talked to
 * the API, and the records read before that would lose it, and with it a secret the service shows nowhere.
 */
export async function putEndpointRecord(
  recordsPath: string,
  record: EndpointRecordOnFile,
  replaces: (r: EndpointRecordOnFile) => boolean,
): Promise<EndpointRecordOnFile[]> {
  const recordsNow = [...(await readEndpointRecords(recordsPath)).filter((r) => !replaces(r)), record];
  await writeRecords(recordsPath, recordsNow);
  return recordsNow;
}

/** Files `records` again (their folder was deleted while listen ran), beside any written since. */
export async function refileEndpointRecords(recordsPath: string, records: EndpointRecordOnFile[]): Promise<void> {
  const now = await readEndpointRecords(recordsPath);
  await writeRecords(recordsPath, [...now, ...records.filter((r) => !now.some((n) => sameRecord(n, r)))]);
}

/** Forgets the records `matches` picks, and with them their secrets; says how many there were. */
export async function forgetEndpointRecords(
  recordsPath: string,
  matches: (record: EndpointRecordOnFile) => boolean,
): Promise<number> {
  const records = await readEndpointRecords(recordsPath);
  const kept = records.filter((r) => !matches(r));
  if (kept.length !== records.length) await writeRecords(recordsPath, kept);
  return records.length - kept.length;
}
