// `.clockhook/endpoints.json`: the endpoints listen registered, with the secret only the create response had.
import { readFile } from 'node:fs/promises';
import { CliError } from '../errors.js';
import { writePrivateFile } from './private-files.js';

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

/** `.clockhook/endpoints.json` exists but cannot be read as the records listen wrote. */
export class EndpointRecordsError extends CliError {
  override readonly name = 'EndpointRecordsError';
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
