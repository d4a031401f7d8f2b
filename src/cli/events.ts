import type { Command } from 'commander';
import { type DeliveryOutlook, readDeliveryOutlook } from '../api/index.js';
import { type EventRecord, type RedeliveryAcknowledgement } from '../contract/index.js';
import { resolveApi, withApiOptions, type ApiFlags } from './api-options.js';
import { textExcerpt } from '../shared/excerpt.js';
import { formatTable, PAINT, printJson, terminalWidth } from './output.js';
import { redeliverMissed } from './catch-up.js';
import { UsageError } from '../errors.js';
import { recordsOnFile } from './secret.js';
import { readCaptureStore } from '../store/read-only.js';
import { outlookWords, sayOutlook, serviceEventStory, statusTone } from '../story/index.js';
import { parseEventType } from './help.js';
import { parsePositiveInt } from './process.js';
import { counted } from '../counted.js';
import { folderFiles } from '../folder/index.js';

interface EventFlags extends ApiFlags {
  type?: string;
  limit?: string;
  cursor?: string;
}

const formatCreated = (created: unknown) =>
  typeof created === 'number' ? new Date(created * 1000).toISOString() : '-';

function lastStatus(event: EventRecord): string {
  const last = event.delivery_attempts.at(-1);
  if (!last) return 'pending';
  return PAINT[statusTone(last.statusCode)](
    last.statusCode === null ? (last.error ?? 'failed') : String(last.statusCode),
  );
}

function printEvents(page: { data: EventRecord[]; nextCursor: string | null }): void {
  if (page.data.length === 0) {
    console.log('No events. Emit one on the sandbox with "npx clockhook trigger punch.created".');
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

/** A delay of the retry table (as scaled by a sandbox's --time-scale), in the unit a person reads it in. */
/** A time as `events get` says it: UTC, to the second. */
const utc = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/**
 * What happens next to each endpoint whose latest attempt failed (see deliveryOutlook), in the story's words
 * with what this terminal can do about it, one line each, then the command that sends the event again now;
 * nothing when every endpoint took it.
 */
export function outlookLines(
  eventId: string,
  outlook: DeliveryOutlook[],
  { now, timeScale }: { now: number; timeScale: number },
): string[] {
  const lines = outlook.map((o) => {
    const said = sayOutlook(outlookWords(o, { timeScale }), o.next === 'attempt' ? o.dueAt : null, now, utc);
    const enable = o.next === 'none' && o.reason === 'disabled';
    return enable ? `${said} "npx clockhook endpoints enable ${o.endpointId}" enables it.` : said;
  });
  if (lines.length === 0) return [];
  return [
    ...lines,
    `To send the event again now, to every endpoint subscribed to it (retries already scheduled still come): npx clockhook events redeliver ${eventId}`,
  ];
}

/**
 * The event's story: in a listen's folder (one endpoint on file), from its captures here and the service's
 * view for that endpoint; elsewhere, the service's view alone.
 */
async function storyHere(event: EventRecord, outlook: DeliveryOutlook[]) {
  const records = await recordsOnFile().catch(() => []);
  if (records.length !== 1) return serviceEventStory(event, outlook, {});
  const reading = await readCaptureStore(folderFiles().captures).catch(() => null);
  const captures = (reading?.captures ?? []).filter((c) => c.envelope?.id === event.id);
  return serviceEventStory(event, outlook, { captures, endpointId: records[0].id });
}

function printEvent(event: EventRecord, outlook: DeliveryOutlook[], timeScale: number, state: string): void {
  console.log(`${event.id}  ${event.type}  created ${formatCreated(event.created)}  ${state}`);
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
  const next = outlookLines(event.id, outlook, { now: Date.now(), timeScale });
  if (next.length > 0) console.log(`\n${next.join('\n')}`);
}

/** `clockhook events …`: list, inspect and redeliver events. */
export function registerEvents(program: Command): void {
  const events = program.command('events').description('list events, show delivery attempts, redeliver an event');

  withApiOptions(events.command('list').description('list events, newest first'))
    .option('--type <type>', 'only this event type')
    .option('--limit <n>', 'how many (over 100: read 100 at a time)', '20')
    .option('--cursor <cursor>', 'the next page, as printed by the previous one')
    .action(async (flags: EventFlags) => {
      // Bad flags are said before anything is looked up.
      const limit = parsePositiveInt(flags.limit ?? '20', '--limit');
      const type = flags.type === undefined ? undefined : parseEventType(flags.type, '--type');
      const { client } = await resolveApi(flags);
      const page = await client.listEvents({ type, limit, cursor: flags.cursor });
      if (flags.json) printJson(page);
      else printEvents(page);
    });

  withApiOptions(events.command('get <id>').description('show an event and its delivery attempts')).action(
    async (id: string, flags: EventFlags) => {
      const { client, timeScale } = await resolveApi(flags);
      const event = await client.getEvent(id);
      const outlook = await readDeliveryOutlook(client, event, timeScale);
      const { state, words, next } = await storyHere(event, outlook);
      if (flags.json) printJson({ ...event, story: { state, words, next } });
      else printEvent(event, outlook, timeScale, words);
    },
  );

  withApiOptions(
    events
      .command('redeliver [id]')
      .description('send an event again to the endpoints subscribed now; --missed: what listen missed while off')
      .option('--missed', "the events listen's endpoint in this folder missed while listen was off")
      .option('--endpoint <id>', 'with --missed: which endpoint on file, when there are several')
      .option('--yes', 'with --missed: go on when a redelivery reaches other endpoints too'),
  ).action(
    async (id: string | undefined, flags: EventFlags & { missed?: boolean; endpoint?: string; yes?: boolean }) => {
      if (flags.missed) {
        if (id !== undefined) throw new UsageError('give an event id or --missed, not both.');
        const { client, timeScale } = await resolveApi(flags);
        return redeliverMissed(client, {
          timeScale,
          endpointId: flags.endpoint,
          yes: Boolean(flags.yes),
          json: Boolean(flags.json),
        });
      }
      if (id === undefined) throw new UsageError('give the id of the event to redeliver (evt_…), or --missed.');
      const ack: RedeliveryAcknowledgement = await (await resolveApi(flags)).client.redeliverEvent(id);
      if (flags.json) printJson(ack);
      else console.log(`Redelivery of ${ack.eventId} queued for ${counted(ack.endpointsNotified, 'endpoint')}.`);
    },
  );
}
