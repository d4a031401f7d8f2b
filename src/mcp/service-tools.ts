// The tools over the service's API (the sandbox of this folder, or the real one with a key): trigger an
// event, read one with its attempts, the missed events and their redelivery, endpoints and their ping.
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { readDeliveryOutlook } from '../api/index.js';
import {
  type EventRecord,
  isDomainEventType,
  sampleData,
  setPath,
  unsetPath,
  unknownTypeWords,
} from '../contract/index.js';
import { catchUp, findMissedHere } from '../listen/index.js';
import { serviceEventStory } from '../story/index.js';
import { apiOf, endpointOnFile, type McpContext, readStore, writingApiOf } from './context.js';
import { MCP_TYPE_LISTING, result, UNTRUSTED } from './present.js';

const WRITES = { readOnlyHint: false, destructiveHint: false, openWorldHint: true } as const;
const READS = { readOnlyHint: true, openWorldHint: true } as const;
const stateDir = (ctx: McpContext) => `${ctx.dir}/.clockhook`;

/** The event's data: the type's sample, changed by `set` (dot paths, as trigger --set) and `unset`. */
function eventData(type: string, set: Record<string, unknown>, unset: string[]): unknown {
  const data = structuredClone(sampleData(type));
  for (const [path, value] of Object.entries(set)) setPath(data, path, value);
  for (const path of unset)
    if (!unsetPath(data, path)) throw new Error(`unset ${path}: the data has nothing at ${path}.`);
  return data;
}

function registerTrigger(server: McpServer, ctx: McpContext): void {
  server.registerTool(
    'trigger',
    {
      title: 'Trigger an event',
      description:
        'Makes the sandbox emit an event of a type with its sample data, changed by set (dot paths: { "employee.name": "Zoë" }) and unset; it is delivered to listen\'s endpoint as the service would.',
      inputSchema: {
        type: z.string().describe('one of the 38 event types, e.g. punch.created'),
        set: z.record(z.string(), z.unknown()).default({}),
        unset: z.array(z.string()).default([]),
      },
      outputSchema: { id: z.string(), type: z.string(), created: z.number() },
      annotations: WRITES,
    },
    async ({ type, set, unset }) => {
      if (!isDomainEventType(type)) throw new Error(`type: ${unknownTypeWords(type, MCP_TYPE_LISTING)}.`);
      const { client } = await writingApiOf(ctx, 'trigger');
      const data = eventData(type, set, unset);
      const event = await client.request<EventRecord>('POST', '/sandbox/events', { body: { type, data } });
      return result(`Triggered ${event.type} ${event.id}.`, {
        id: event.id,
        type: event.type,
        created: Number(event.created),
      });
    },
  );
}

function registerEvent(server: McpServer, ctx: McpContext): void {
  server.registerTool(
    'get_event',
    {
      title: 'Get an event',
      description:
        "The service's record of an event: its delivery attempts (status, duration, the app's answer), what comes next, and its state here.",
      inputSchema: { eventId: z.string().describe('evt_…') },
      outputSchema: {
        event: z.looseObject({ id: z.string() }),
        story: z.looseObject({ state: z.string() }),
        untrusted: z.string(),
      },
      annotations: READS,
    },
    async ({ eventId }) => {
      const { client, timeScale } = await apiOf(ctx);
      const event = await client.getEvent(eventId);
      const outlook = await readDeliveryOutlook(client, event, timeScale);
      const captures = (await readStore(ctx)).captures.filter((c) => c.envelope?.id === eventId);
      const endpoint = await endpointOnFile(ctx).catch(() => null);
      const story = serviceEventStory(event, outlook, { captures, endpointId: endpoint?.id });
      const { state, words, next } = story;
      const text = `${event.type} ${event.id}: ${event.delivery_attempts.length} attempt(s); ${words}.\n${UNTRUSTED}`;
      return result(text, { event: { ...event, outlook }, story: { state, words, next }, untrusted: UNTRUSTED });
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
      outputSchema: { missed: z.array(z.looseObject({ eventId: z.string() })) },
      annotations: READS,
    },
    async () => {
      const { client, timeScale } = await apiOf(ctx);
      const endpoint = await client.getEndpoint((await endpointOnFile(ctx)).id);
      const missed = await findMissedHere({ client, endpoint, stateDir: stateDir(ctx), timeScale });
      return result(`${missed.length} missed event(s).`, { missed });
    },
  );
  server.registerTool(
    'redeliver_missed',
    {
      title: 'Redeliver missed events',
      description:
        'Asks the service to redeliver the missed events now (re-enabling a disabled endpoint first). A redelivery reaches every enabled endpoint subscribed to its event: when that includes others, it asks for includeOtherEndpoints.',
      inputSchema: { includeOtherEndpoints: z.boolean().default(false) },
      outputSchema: {
        redelivered: z.array(z.string()),
        reenabled: z.boolean(),
        needsConfirmation: z.string().optional(),
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
      return result(`Redelivered ${done.redelivered.length} event(s).`, done);
    },
  );
}

function registerEndpoints(server: McpServer, ctx: McpContext): void {
  server.registerTool(
    'list_endpoints',
    {
      title: 'List endpoints',
      description: 'The webhook endpoints of the account (no secrets): URL, event types, status.',
      inputSchema: {},
      outputSchema: { endpoints: z.array(z.looseObject({ id: z.number() })) },
      annotations: READS,
    },
    async () => {
      const { client } = await apiOf(ctx);
      const endpoints = (await client.listEndpoints({ limit: Number.POSITIVE_INFINITY })).data.map(
        ({ secret: _never, ...endpoint }) => endpoint,
      );
      return result(endpoints.map((e) => `#${e.id} ${e.url} ${e.status}`).join('\n') || 'No endpoints.', { endpoints });
    },
  );
  server.registerTool(
    'ping_endpoint',
    {
      title: 'Ping an endpoint',
      description: 'Asks the service to send a webhook_endpoint.ping to one endpoint (a disabled one too).',
      inputSchema: { endpointId: z.number().int().describe('the endpoint id, from list_endpoints') },
      outputSchema: { eventId: z.string(), endpointId: z.number() },
      annotations: WRITES,
    },
    async ({ endpointId }) => {
      const { client } = await writingApiOf(ctx, 'ping_endpoint');
      const ack = await client.pingEndpoint(endpointId);
      return result(`Ping ${ack.eventId} queued for endpoint ${ack.endpointId}.`, {
        eventId: ack.eventId,
        endpointId: ack.endpointId,
      });
    },
  );
}

/** The tools over the service's API. */
export function registerServiceTools(server: McpServer, ctx: McpContext): void {
  registerTrigger(server, ctx);
  registerEvent(server, ctx);
  registerMissed(server, ctx);
  registerEndpoints(server, ctx);
}
