import type { Command } from 'commander';
import { type ApiClient, ApiError } from '../api/index.js';
import { type DeliveryAttempt, type EventRecord, LIMITS, PING_EVENT_TYPE, type RedeliveryAcknowledgement } from '../contract/index.js';
import { resolveApi, withApiOptions, type ApiFlags } from './api-options.js';
import { textExcerpt } from '../listener/index.js';
import { colour, formatTable, printJson, terminalWidth } from './output.js';
import { parsePositiveInt } from './process.js';

interface EventFlags extends ApiFlags {
  type?: string;
  limit?: string;
  cursor?: string;
}

const formatCreated = (created: unknown) => (typeof created === 'number' ? new Date(created * 1000).toISOString() : '-');

function lastStatus(event: EventRecord): string {
  const last = event.delivery_attempts.at(-1);
  if (!last) return 'pending';
  if (last.statusCode === null) return colour.red(last.error ?? 'failed');
  return last.statusCode < 300 ? colour.green(String(last.statusCode)) : colour.red(String(last.statusCode));
}

function printEvents(page: { data: EventRecord[]; nextCursor: string | null }): void {
  if (page.data.length === 0) {
    console.log('No events. Emit one on the sandbox with "clockhook trigger punch.created".');
    return;
  }
  console.log(
    formatTable(
      ['ID', 'TYPE', 'CREATED', 'ATTEMPTS', 'LAST'],
      page.data.map((e) => [e.id, e.type, formatCreated(e.created), e.delivery_attempts.length, lastStatus(e)]),
      terminalWidth(),
    ),
  );
  if (page.nextCursor) console.log(`\nMore: --cursor ${page.nextCursor}`);
}

const failed = (attempt: DeliveryAttempt) => attempt.statusCode === null || attempt.statusCode < 200 || attempt.statusCode >= 300;

/** A delay of the retry table (as scaled by a sandbox's --time-scale), in the unit a person reads it in. */
function formatDelay(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${Math.round(ms / 1000)} s`;
  if (ms < 3_600_000) return `${Math.round(ms / 60_000)} min`;
  return `${Math.round(ms / 360_000) / 10} h`;
}

/** An endpoint's state as far as its deliveries go; unknown when it could not be read. */
export type EndpointState = 'enabled' | 'disabled' | 'deleted' | 'unknown';

/** The latest attempt for each endpoint of the event whose latest attempt failed. */
function latestFailures(event: EventRecord): DeliveryAttempt[] {
  const latest = new Map<number, DeliveryAttempt>();
  for (const attempt of event.delivery_attempts) latest.set(attempt.endpointId, attempt);
  return [...latest.values()].filter(failed);
}

/** The state of each endpoint the event's failures went to, read from the API (one request each). */
async function failingEndpointStates(client: ApiClient, event: EventRecord): Promise<Map<number, EndpointState>> {
  const ids = latestFailures(event).map((attempt) => attempt.endpointId);
  const states = await Promise.all(
    ids.map((id) =>
      client.getEndpoint(id).then(
        (endpoint): EndpointState => (endpoint.status === 'disabled' ? 'disabled' : 'enabled'),
        (error: unknown): EndpointState => (error instanceof ApiError && error.status === 404 ? 'deleted' : 'unknown'),
      ),
    ),
  );
  return new Map(ids.map((id, i) => [id, states[i]]));
}

/**
 * What happens next to each endpoint whose latest attempt failed, by the contract's retry policy (the
 * API says no more): when the next attempt is due, that the delivery failed for good, or that the
 * endpoint, disabled or deleted, gets no more; then the command that sends the event again now. An
 * endpoint whose latest attempt succeeded needs no line.
 */
export function deliveryOutlook(event: EventRecord, { now, timeScale, endpoints = new Map() }: { now: number; timeScale: number; endpoints?: Map<number, EndpointState> }): string[] {
  const lines = latestFailures(event).map((last) => {
    const state = endpoints.get(last.endpointId);
    if (state === 'deleted') return `Endpoint ${last.endpointId} no longer exists: nothing more is sent to it.`;
    // A ping reaches a disabled endpoint too: it is the diagnostic for a broken one (DESIGN.md).
    if (state === 'disabled' && event.type !== PING_EVENT_TYPE) {
      return `Endpoint ${last.endpointId} is disabled, and a disabled endpoint is excluded from deliveries: no more attempts come while it is. "clockhook endpoints enable ${last.endpointId}" enables it.`;
    }
    if (last.attempt >= LIMITS.deliveryAttempts) {
      return `Endpoint ${last.endpointId}: the delivery failed after ${LIMITS.deliveryAttempts} attempts; the service does not try again.`;
    }
    const delay = LIMITS.retryDelaysMs[last.attempt] * timeScale;
    const due = Date.parse(last.createdAt) + delay;
    const policy = `${formatDelay(delay)} after attempt ${last.attempt} (the service's retry policy${timeScale === 1 ? '' : `, times the sandbox's --time-scale ${timeScale}`})`;
    const next = `Endpoint ${last.endpointId}: attempt ${last.attempt + 1} of ${LIMITS.deliveryAttempts}`;
    if (Number.isNaN(due)) return `${next} comes ${policy}.`;
    const at = new Date(due).toISOString().replace(/\.\d{3}Z$/, 'Z');
    return due > now ? `${next} is due at about ${at}, ${policy}.` : `${next} was due at about ${at}, ${policy}; it shows here once it completes.`;
  });
  if (lines.length === 0) return [];
  return [...lines, `To send the event again now, to every endpoint subscribed to it (retries already scheduled still come): clockhook events redeliver ${event.id}`];
}

function printEvent(event: EventRecord, outlook: Parameters<typeof deliveryOutlook>[1]): void {
  console.log(`${event.id}  ${event.type}  created ${formatCreated(event.created)}`);
  if (event.delivery_attempts.length === 0) {
    console.log('No delivery attempts yet (attempts appear once they complete).');
    return;
  }
  console.log(
    formatTable(
      ['#', 'ENDPOINT', 'STATUS', 'DURATION', 'AT', 'ERROR OR ANSWER'],
      // Numbered in the order the service lists them, as the inspector does: a redelivery's attempts
      // start again at 1 per delivery, which read as a second "#1". The answer as on listen's line.
      event.delivery_attempts.map((a, i) => [
        i + 1,
        a.endpointId,
        a.statusCode ?? '-',
        a.durationMs === undefined ? '-' : `${a.durationMs} ms`,
        a.createdAt,
        a.error ?? (typeof a.responseBody === 'string' ? textExcerpt(a.responseBody) : null),
      ]),
      terminalWidth(),
    ),
  );
  const next = deliveryOutlook(event, outlook);
  if (next.length > 0) console.log(`\n${next.join('\n')}`);
}

/** `clockhook events …`: list, inspect and redeliver events. */
export function registerEvents(program: Command): void {
  const events = program.command('events').description('list events, show delivery attempts, redeliver an event');

  withApiOptions(events.command('list').description('list events, newest first'))
    .option('--type <type>', 'only this event type')
    .option('--limit <n>', 'how many (1-100)', '20')
    .option('--cursor <cursor>', 'the next page, as printed by the previous one')
    .action(async (flags: EventFlags) => {
      // Bad flags are said before anything is looked up.
      const limit = parsePositiveInt(flags.limit ?? '20', '--limit');
      const { client } = await resolveApi(flags);
      const page = await client.listEvents({ type: flags.type, limit, cursor: flags.cursor });
      if (flags.json) printJson(page);
      else printEvents(page);
    });

  withApiOptions(events.command('get <id>').description('show an event and its delivery attempts')).action(
    async (id: string, flags: EventFlags) => {
      const { client, timeScale } = await resolveApi(flags);
      const event = await client.getEvent(id);
      if (flags.json) printJson(event);
      else printEvent(event, { now: Date.now(), timeScale, endpoints: await failingEndpointStates(client, event) });
    },
  );

  withApiOptions(events.command('redeliver <id>').description('send an event again to the endpoints subscribed now')).action(
    async (id: string, flags: EventFlags) => {
      const ack: RedeliveryAcknowledgement = await (await resolveApi(flags)).client.redeliverEvent(id);
      if (flags.json) printJson(ack);
      else console.log(`Redelivery of ${ack.eventId} queued for ${ack.endpointsNotified} endpoint(s).`);
    },
  );
}
