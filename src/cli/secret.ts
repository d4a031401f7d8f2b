import { relative } from 'node:path';
import type { Command } from 'commander';
import { stateAbove } from './api-options.js';
import { CliError, UsageError } from '../errors.js';
import { maskSecret, printJson } from './output.js';
import { type EndpointRecordOnFile, folderFiles, readEndpointRecords } from '../folder/index.js';

/** Where listen keeps the endpoints it registered from this folder, with their secrets. */
export const RECORDS_PATH = folderFiles().endpoints;

/**
 * The API a record is on, for people: listen files an embedded sandbox's endpoints under the port asked
 * for, and with `--sandbox-port 0` that is port 0, which reads as no address at all.
 */
const apiName = (apiBase: string) =>
  /^http:\/\/127\.0\.0\.1:0$/.test(apiBase) ? "this folder's sandbox (--sandbox-port 0)" : apiBase;

/** One endpoint on file for a message: never its whole secret. */
export const describeRecord = (record: EndpointRecordOnFile) =>
  `endpoint ${record.id} (${record.url}, secret ${maskSecret(record.secret)})`;

/** The records listen keeps in this folder; one it cannot read is a runtime failure that says what to do. */
export async function recordsOnFile(): Promise<EndpointRecordOnFile[]> {
  return readEndpointRecords(RECORDS_PATH);
}

const matches = (record: EndpointRecordOnFile, which: string) =>
  String(record.id) === which || record.url === which || (URL.canParse(which) && record.url === new URL(which).href);

/**
 * The endpoint on file that `which` (an id or a URL) names, or the only one when `which` is not given.
 * Throws a usage error listing those on file when that is not exactly one.
 */
export async function endpointRecordOnFile(which: string | undefined): Promise<EndpointRecordOnFile> {
  const records = await recordsOnFile();
  if (records.length === 0) {
    const above = await stateAbove(
      'endpoints.json',
      async (path) => (await readEndpointRecords(path).catch(() => [])).length > 0,
    );
    if (above) {
      throw new CliError(
        `no endpoint on file in ${RECORDS_PATH}, but ${above} has some: run this there (cd ${relative(process.cwd(), above)}), where clockhook listen ran.`,
      );
    }
    throw new CliError(
      `no endpoint on file in ${RECORDS_PATH}: clockhook listen registers one the first time it runs in this folder (with the sandbox, --public-url or --relay) and keeps its secret there. Run it, then this again. An endpoint made some other way shows its secret only in the answer that created it.`,
    );
  }
  const chosen = which === undefined ? records : records.filter((record) => matches(record, which));
  if (chosen.length === 1) return chosen[0];
  const listed = (some: EndpointRecordOnFile[]) =>
    some.map((record) => `${describeRecord(record)} on ${apiName(record.apiBase)}`).join(', ');
  if (which === undefined)
    throw new UsageError(
      `${RECORDS_PATH} holds ${records.length} endpoints: ${listed(records)}. Name one by its id or URL: npx clockhook secret <id|url>.`,
    );
  if (chosen.length === 0)
    throw new UsageError(
      `no endpoint ${JSON.stringify(which)} in ${RECORDS_PATH}, which holds ${listed(records)}. Name one by its id or URL.`,
    );
  throw new UsageError(
    `${JSON.stringify(which)} names ${chosen.length} endpoints in ${RECORDS_PATH}: ${listed(chosen)}. Name one by its URL.`,
  );
}

/**
 * `clockhook secret`: the signing secret your app verifies with, without stopping listen (as
 * `stripe listen --print-secret`), alone on stdout so that `$(npx clockhook secret)` is the secret.
 */
export function registerSecret(program: Command): void {
  program
    .command('secret [endpoint]')
    .description('print the signing secret of the endpoint clockhook listen registered from this folder')
    .option('--json', 'print { id, url, apiBase, secret }')
    .action(async (which: string | undefined, flags: { json?: boolean }) => {
      const record = await endpointRecordOnFile(which);
      if (flags.json) {
        printJson({ id: record.id, url: record.url, apiBase: record.apiBase, secret: record.secret });
        return;
      }
      console.error(
        `The secret of endpoint ${record.id} (${record.url}, on ${apiName(record.apiBase)}), which clockhook listen registered from this folder:`,
      );
      console.log(record.secret);
    });
}
