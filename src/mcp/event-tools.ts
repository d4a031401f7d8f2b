// The tools over the service's events: one event with its attempts and what comes next, the events listen
// missed while it was off, and their redelivery.
import { type McpServer, z } from './sdk.js';
import { ApiError, readDeliveryOutlook } from '../api/index.js';
import type { EventRecord } from '../contract/index.js';
import { catchUp, findMissedHere } from '../listen/index.js';
import { answerExcerpt } from '../shared/excerpt.js';
import { missedWords, outlookWords, sayOutlook, serviceEventStory } from '../story/index.js';
import { bodyInputs } from './bounds.js';
import { eventIdInput } from './capture-tools.js';
import { apiOf, capturesHere, endpointOnFile, type McpContext, writingApiOf } from './context.js';
import { result, UNTRUSTED } from './present.js';
import * as schema from './schemas.js';
import { READS, WRITES } from './service-tools.js';
import { counted } from '../counted.js';

const stateDir = (ctx: McpContext) => `${ctx.dir}/.clockhook`;
const iso = (ms: number) => new Date(ms).toISOString();

/** The event's fields a result names, each attempt's answer cut to `max` characters. */
function eventShown(event: EventRecord, max: number) {
  const { id, type, apiVersion, created, data } = event;
  const attempts = event.delivery_attempts.map(({ attempt, endpointId, statusCode, responseBody, ...a }) => ({
    ...{ attempt, endpointId, statusCode },
    responseBody: responseBody.length > max ? `${responseBody.slice(0, max)}…` : responseBody,
    ...{ durationMs: a.durationMs, error: a.error, createdAt: a.createdAt },
  }));
  const when = created === undefined ? {} : { created: Number(created) };
  return {
    id,
    type,
    ...(apiVersion ? { apiVersion } : {}),
    ...when,
    ...(data ? { data } : {}),
    delivery_attempts: attempts,
  };
}

/**
 * The service does not know an event that was captured here (sent by a test, a script, another account): said
 * with where its captures are; any other error as it is.
 */
async function unknownHere(ctx: McpContext, eventId: string, error: unknown): Promise<unknown> {
  if (!(error instanceof ApiError && error.status === 404)) return error;
  const held = (await capturesHere(ctx)).filter((c) => c.envelope?.id === eventId).length;
  if (held === 0) return error;
  return new Error(
    `The service has no event ${eventId}: it was sent here by something else (a test, a script, another account). Its ${counted(held, 'capture')} here: list_captures with eventId ${eventId}.`,
  );
}

function registerEvent(server: McpServer, ctx: McpContext): void {
  server.registerTool(
    'get_event',
    {
      title: 'Get an event',
      description:
        "The service's record of an event: its delivery attempts (status, duration, the app's answer), what the service does next, and its state here (a replay the app took here while the service still retries is said as both).",
      inputSchema: { eventId: eventIdInput, maxBodyBytes: bodyInputs.maxBodyBytes },
      outputSchema: { event: schema.serviceEvent, story: schema.eventStory, untrusted: schema.untrusted },
      annotations: READS,
    },
    async ({ eventId, maxBodyBytes }) => {
      const { client, timeScale } = await apiOf(ctx);
      const event = await client.getEvent(eventId).catch(async (error: unknown) => {
        throw await unknownHere(ctx, eventId, error);
      });
      const outlook = (await readDeliveryOutlook(client, event, timeScale)).map((o) => {
        const words = sayOutlook(
          outlookWords(o, { timeScale }),
          o.next === 'attempt' ? o.dueAt : null,
          Date.now(),
          iso,
        );
        return { ...o, words };
      });
      const captures = (await capturesHere(ctx)).filter((c) => c.envelope?.id === eventId);
      const endpoint = await endpointOnFile(ctx).catch(() => null);
      const { state, words, next } = serviceEventStory(event, outlook, { captures, endpointId: endpoint?.id });
      const attempts = event.delivery_attempts.map((a, i) => {
        const said = a.error ?? answerExcerpt({ body: a.responseBody, bodyEncoding: 'utf8' });
        return `#${i + 1} endpoint ${a.endpointId}: ${a.statusCode ?? 'no answer'} in ${a.durationMs} ms${said ? `: ${JSON.stringify(said)}` : ''}`;
      });
      const text = [`${event.type} ${event.id}: ${words}.`, UNTRUSTED, ...attempts, ...outlook.map((o) => o.words)];
      return result(text.join('\n'), {
        event: { ...eventShown(event, maxBodyBytes), outlook },
        story: { state, words, next },
        untrusted: UNTRUSTED,
      });
    },
  );
}

function registerMissed(server: McpServer, ctx: McpContext): void {
  server.registerTool(
    'list_missed',
    {
      title: 'List missed events',
      description:
        'The events that came while listen was off and did not reach its endpoint, with what the service does next.',
      inputSchema: {},
      outputSchema: { missed: z.array(schema.missedEvent) },
      annotations: READS,
    },
    async () => {
      const { client, timeScale } = await apiOf(ctx);
      const endpoint = await client.getEndpoint((await endpointOnFile(ctx)).id);
      const found = await findMissedHere({ client, endpoint, stateDir: stateDir(ctx), timeScale });
      const missed = found.map((m) => {
        const dueAt = m.outlook.next === 'attempt' && 'dueAt' in m.outlook ? m.outlook.dueAt : null;
        return { ...m, outlook: { ...m.outlook, words: sayOutlook(missedWords(m.outlook), dueAt, Date.now(), iso) } };
      });
      const lines = missed.map((m) => `${m.type} ${m.eventId}: ${m.outlook.words}`);
      return result([`${missed.length} missed event(s).`, ...lines].join('\n'), { missed });
    },
  );
  server.registerTool(
    'redeliver_missed',
    {
      title: 'Redeliver missed events',
      description:
        'Asks the service to redeliver the missed events now (re-enabling a disabled endpoint first). A redelivery reaches every enabled endpoint subscribed to its event: when that includes others, it asks for includeOtherEndpoints.',
      inputSchema: {
        includeOtherEndpoints: z
          .boolean()
          .default(false)
          .describe('redeliver even when other endpoints subscribed to the events get them again too'),
      },
      outputSchema: {
        redelivered: z.array(z.string()).describe('the event ids redelivered'),
        reenabled: z.boolean().describe('the endpoint was disabled and is enabled again'),
        needsConfirmation: z.string().optional().describe('which other endpoints a redelivery would reach'),
      },
      annotations: WRITES,
    },
    async ({ includeOtherEndpoints }) => {
      const { client, timeScale } = await writingApiOf(ctx, 'redeliver_missed');
      const endpoint = await client.getEndpoint((await endpointOnFile(ctx)).id);
      const missed = await findMissedHere({ client, endpoint, stateDir: stateDir(ctx), timeScale });
      let asked: string | undefined;
      const confirm = async (_others: unknown[], reach: string) => includeOtherEndpoints || ((asked = reach), false);
      const done = await catchUp({ client, endpoint, missed, confirm, say: () => {} });
      if (asked)
        return result(`Not redelivered: ${asked}. Call again with includeOtherEndpoints.`, {
          ...done,
          needsConfirmation: asked,
        });
      const which = done.redelivered.length === 0 ? ': none was missed' : `: ${done.redelivered.join(', ')}`;
      return result(`Redelivered ${counted(done.redelivered.length, 'event')}${which}.`, done);
    },
  );
}

/** The tools over the service's events. */
export function registerEventTools(server: McpServer, ctx: McpContext): void {
  registerEvent(server, ctx);
  registerMissed(server, ctx);
}
