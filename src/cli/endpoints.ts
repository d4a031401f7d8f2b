import { type Command, Option } from 'commander';
import type { ListPage, WebhookEndpoint } from '../contract/index.js';
import { isSandboxBase, sameBase } from '../listen/endpoint-records.js';
import { parseSubscription, resolveApi, withApiOptions, type ApiFlags } from './api-options.js';
import { UsageError } from '../errors.js';
import { parsePositiveInt } from './process.js';
import { formatTable, PAINT, printJson, terminalWidth } from './output.js';
import { endpointTone } from '../story/index.js';
import { RECORDS_PATH } from './secret.js';
import { EndpointRecordsError, forgetEndpointRecords } from '../folder/index.js';

interface EndpointFlags extends ApiFlags {
  url?: string;
  events?: string;
  description?: string;
  status?: 'enabled' | 'disabled';
  limit?: string;
  cursor?: string;
}

/** `width`: the terminal's, to fit a list to it; undefined for one endpoint, whose URL is never cut. */
function printEndpoints(endpoints: WebhookEndpoint[], width: number | undefined): void {
  if (endpoints.length === 0) {
    console.log(
      'No webhook endpoints. Create one with "npx clockhook endpoints create --url https://… --events \'*\'".',
    );
    return;
  }
  console.log(
    formatTable(
      ['ID', 'STATUS', 'URL', 'EVENTS', 'DESCRIPTION'],
      endpoints.map((e) => [
        e.id,
        PAINT[endpointTone(String(e.status))](String(e.status)),
        e.url,
        e.enabledEvents.join(','),
        e.description,
      ]),
      width,
    ),
  );
}

function printEndpoint(endpoint: WebhookEndpoint): void {
  printEndpoints([endpoint], undefined);
  if (endpoint.secret) {
    console.log(`\nSigning secret: ${endpoint.secret}`);
    console.log('Store it now: it is shown only in this response and cannot be retrieved later.');
  }
  if (endpoint.status === 'disabled')
    console.log(`\nThis endpoint is disabled. Re-enable it with "npx clockhook endpoints enable ${endpoint.id}".`);
}

function parseId(id: string): string {
  if (!/^\d+$/.test(id))
    throw new UsageError(
      `endpoint id must be a number (got ${JSON.stringify(id)}); see "npx clockhook endpoints list".`,
    );
  return id;
}

/**
 * A deleted endpoint that listen registered has its record in `.clockhook/endpoints.json`, with the secret:
 * it goes too, so that `clockhook secret` does not hand out the secret of an endpoint that is gone.
 * `onThisApi`: whether a record's API base is the API the endpoint was deleted on.
 */
async function forgetRecord(id: number, onThisApi: (apiBase: string) => boolean): Promise<void> {
  try {
    if (await forgetEndpointRecords(RECORDS_PATH, (r) => r.id === id && onThisApi(r.apiBase))) {
      console.error(`Its secret, which clockhook listen kept, is no longer on file in ${RECORDS_PATH}.`);
    }
  } catch (error) {
    if (!(error instanceof EndpointRecordsError)) throw error;
    console.error(`The endpoint is deleted, but ${error.message}`);
  }
}

/** A subcommand's action: its id checked first, then `run`, then the result printed (as JSON with --json). */
const action =
  (run: (flags: EndpointFlags, id: string) => Promise<unknown>, print: (result: never) => void) =>
  async (...args: unknown[]) => {
    const command = args.at(-1) as Command;
    const flags = command.opts<EndpointFlags>();
    // Checked here, before any command looks for a sandbox or key: bad input is said first.
    const id = typeof args[0] === 'string' ? parseId(args[0]) : '';
    const result = await run(flags, id);
    if (flags.json) printJson(result);
    else print(result as never);
  };

/** `clockhook endpoints …`: manage webhook endpoints on the service or the sandbox. */
export function registerEndpoints(program: Command): void {
  const endpoints = program
    .command('endpoints')
    .description('list, create, update, delete, ping, enable or disable webhook endpoints');
  registerEndpointReads(endpoints);
  registerEndpointWrites(endpoints);
}

/** list, get, ping, enable and disable. */
function registerEndpointReads(endpoints: Command): void {
  withApiOptions(endpoints.command('list').description('list webhook endpoints, newest first'))
    .option('--limit <n>', 'how many (over 100: read 100 at a time)', '20')
    .option('--cursor <cursor>', 'the next page, as printed by the previous one')
    .action(
      action(
        async (flags) => {
          const limit = parsePositiveInt(flags.limit ?? '20', '--limit');
          return (await resolveApi(flags)).client.listEndpoints({ limit, cursor: flags.cursor });
        },
        (page: ListPage<WebhookEndpoint>) => {
          printEndpoints(page.data, terminalWidth());
          if (page.nextCursor) console.log(`\nMore: --cursor ${page.nextCursor}`);
        },
      ),
    );

  withApiOptions(endpoints.command('get <id>').description('show one endpoint (never its secret)')).action(
    action(async (flags, id) => (await resolveApi(flags)).client.getEndpoint(id), printEndpoint),
  );

  withApiOptions(endpoints.command('ping <id>').description('send a webhook_endpoint.ping to one endpoint')).action(
    action(
      async (flags, id) => (await resolveApi(flags)).client.pingEndpoint(id),
      (ack: { eventId: string; endpointId: number }) =>
        console.log(
          `Ping ${ack.eventId} queued for endpoint ${ack.endpointId}. See it with "npx clockhook events get ${ack.eventId}".`,
        ),
    ),
  );

  for (const status of ['enabled', 'disabled'] as const) {
    const verb = status === 'enabled' ? 'enable' : 'disable';
    withApiOptions(endpoints.command(`${verb} <id>`).description(`${verb} an endpoint`)).action(
      action(async (flags, id) => (await resolveApi(flags)).client.updateEndpoint(id, { status }), printEndpoint),
    );
  }
}

/** create, update and delete. */
function registerEndpointWrites(endpoints: Command): void {
  withApiOptions(endpoints.command('create').description('create an endpoint; prints its secret once'))
    .requiredOption('--url <url>', 'required: the HTTPS URL of the receiver')
    .option('--events <types>', 'comma-separated event types, or * for all', '*')
    .option('--description <text>', 'a label')
    .action(
      action(async (flags) => {
        const input = {
          url: flags.url as string,
          enabledEvents: parseSubscription(flags.events ?? '*', '--events'),
          description: flags.description,
        };
        return (await resolveApi(flags)).client.createEndpoint(input);
      }, printEndpoint),
    );

  withApiOptions(
    endpoints.command('update <id>').description('change url, events, description or status (omitted ones are kept)'),
  )
    .option('--url <url>', 'new receiver URL')
    .option('--events <types>', 'new comma-separated event types, or *')
    .option('--description <text>', 'new label')
    .addOption(new Option('--status <status>', 'enabled or disabled').choices(['enabled', 'disabled']))
    .action(
      action(async (flags, id) => {
        const patch = {
          ...(flags.url ? { url: flags.url } : {}),
          ...(flags.events ? { enabledEvents: parseSubscription(flags.events, '--events') } : {}),
          ...(flags.description !== undefined ? { description: flags.description } : {}),
          ...(flags.status ? { status: flags.status } : {}),
        };
        if (Object.keys(patch).length === 0)
          throw new UsageError('nothing to update: pass --url, --events, --description or --status.');
        return (await resolveApi(flags)).client.updateEndpoint(id, patch);
      }, printEndpoint),
    );

  withApiOptions(endpoints.command('delete <id>').description('delete an endpoint')).action(
    action(
      async (flags, id) => {
        const api = await resolveApi(flags);
        const deleted = await api.client.deleteEndpoint(id);
        await forgetRecord(deleted.id, api.fromSandbox ? isSandboxBase : (base) => sameBase(base, api.client.baseUrl));
        return deleted;
      },
      (result: { id: number }) => console.log(`Deleted webhook endpoint ${result.id}.`),
    ),
  );
}
