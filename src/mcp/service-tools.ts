// The tools over the service's API (the sandbox of this folder, or the real one with a key): the event types,
// trigger an event, the endpoints and their ping. The events themselves: event-tools.ts.
import { SandboxClient } from '../api/sandbox-client.js';
import { type McpServer, z } from './sdk.js';
import {
  changedData,
  type EventRecord,
  EVENT_TYPES_BY_RESOURCE,
  isDomainEventType,
  PING_EVENT_TYPE,
  unknownTypeWords,
} from '../contract/index.js';
import { short } from './bounds.js';
import { typeInput } from './capture-tools.js';
import { apiOf, listenRunsHere, type McpContext, writingApiOf } from './context.js';
import { captureLine, captureSummary, MCP_TYPE_LISTING, result, UNTRUSTED } from './present.js';
import { isAnswered, waitForCapture } from './store-wait.js';
import type { Capture } from '../store/index.js';
import { storiesOf } from '../story/index.js';
import * as schema from './schemas.js';

export const WRITES = { readOnlyHint: false, destructiveHint: false, openWorldHint: true } as const;
export const READS = { readOnlyHint: true, openWorldHint: true } as const;

/** The event's data: the type's sample, changed by `set` (dot paths, as trigger --set) and `unset`. */
function eventData(type: string, set: Record<string, unknown>, unset: string[]): unknown {
  const changed = changedData(type, { set: Object.entries(set), unset });
  if ('missing' in changed) throw new Error(`unset ${short(changed.missing)}: the data has nothing at that path.`);
  return changed.data;
}

function registerTypes(server: McpServer): void {
  server.registerTool(
    'list_event_types',
    {
      title: 'List event types',
      description: `The service's event types by resource (${Object.values(EVENT_TYPES_BY_RESOURCE).flat().length} of them, and the ping), as trigger, list_captures and wait_for_delivery take them.`,
      inputSchema: {},
      outputSchema: {
        resources: z.array(z.object({ resource: z.string(), types: z.array(z.string()) })),
        ping: z.string().describe('the type of a ping (ping_endpoint sends one): not one trigger makes'),
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    () => {
      const resources = Object.entries(EVENT_TYPES_BY_RESOURCE).map(([resource, types]) => ({
        resource,
        types: [...types],
      }));
      const lines = resources.map((r) => `${r.resource}: ${r.types.join(', ')}`);
      return result(`${lines.join('\n')}\nping: ${PING_EVENT_TYPE}`, { resources, ping: PING_EVENT_TYPE });
    },
  );
}

function registerTrigger(server: McpServer, ctx: McpContext): void {
  server.registerTool(
    'trigger',
    {
      title: 'Trigger an event',
      description:
        "Makes the sandbox emit an event of a type with its sample data, changed by set and unset; it is delivered to listen's endpoint as the service would (wait_for_delivery with its id shows what the app answered).",
      inputSchema: {
        type: typeInput,
        set: z
          .record(z.string(), z.unknown())
          .default({})
          .describe('values to put in the sample data, by dot path: { "employee.name": "Zoë", "note": null }'),
        unset: z
          .array(z.string().max(200))
          .default([])
          .describe('dot paths to take out of the sample data: ["project.id"]'),
        waitMs: z
          .number()
          .int()
          .min(0)
          .max(120_000)
          .default(0)
          .describe(
            "wait this long for the event's delivery to be answered, and return it with the event (0: do not wait)",
          ),
      },
      outputSchema: {
        id: z.string().describe('the event id, evt_…'),
        type: z.string(),
        created: z.number().describe('Unix seconds'),
        delivery: schema.captureSummary
          .optional()
          .describe('its delivery as answered (with waitMs), absent when none came in time'),
      },
      annotations: WRITES,
    },
    async ({ type, set, unset, waitMs }) => {
      if (!isDomainEventType(type)) throw new Error(`type: ${unknownTypeWords(type, MCP_TYPE_LISTING)}.`);
      const { client } = await writingApiOf(ctx, 'trigger');
      const data = eventData(type, set, unset);
      ctx.lastTriggerAt = Date.now();
      const event = await new SandboxClient(client).emit(type, data);
      return triggeredResult(ctx, event, waitMs);
    },
  );
}

/** What trigger returns: the event made, with its delivery once the app has answered it when asked to wait. */
async function triggeredResult(ctx: McpContext, event: EventRecord, waitMs: number) {
  const triggered = { id: event.id, type: event.type, created: Number(event.created) };
  const said = `Triggered ${event.type} ${event.id}`;
  if (waitMs === 0)
    return result(`${said}; wait_for_delivery with eventId ${event.id} returns what the app answered.`, triggered);
  // Its delivery, once the app has answered it (or clockhook refused it).
  const ofIt = (c: Capture) => c.envelope?.id === event.id && isAnswered(c);
  // The event is made whatever the wait comes to: a listen that stops ends the wait, said beside its id.
  const stillComing = () => listenRunsHere(ctx);
  const got = await waitForCapture(ctx, ofIt, { timeoutMs: waitMs, stillComing }).catch((error: Error) => error);
  if (got instanceof Error) return result(`${said}; its delivery was not waited for: ${got.message}`, triggered);
  if (!got)
    return result(
      `${said}; its delivery was not answered within ${waitMs} ms: wait_for_delivery with eventId ${event.id} waits on.`,
      triggered,
    );
  const delivery = captureSummary(got.found, storiesOf(got.reading.captures));
  return result(`${said}.\n${UNTRUSTED}\n${captureLine(delivery)}`, { ...triggered, delivery });
}

function registerEndpoints(server: McpServer, ctx: McpContext): void {
  server.registerTool(
    'list_endpoints',
    {
      title: 'List endpoints',
      description: 'The webhook endpoints of the account (no secrets): URL, event types, status.',
      inputSchema: {},
      outputSchema: { endpoints: z.array(schema.endpoint) },
      annotations: READS,
    },
    async () => {
      const { client } = await apiOf(ctx);
      const endpoints = (await client.listEndpoints({ limit: Number.POSITIVE_INFINITY })).data.map(
        ({ id, url, enabledEvents, description, status }) => ({ id, url, enabledEvents, description, status }),
      );
      const lines = endpoints.map((e) => `#${e.id} ${e.url} ${e.status}: ${e.enabledEvents.join(', ')}`);
      return result(lines.join('\n') || 'No endpoints.', { endpoints });
    },
  );
  server.registerTool(
    'ping_endpoint',
    {
      title: 'Ping an endpoint',
      description: 'Asks the service to send a webhook_endpoint.ping to one endpoint (a disabled one too).',
      inputSchema: { endpointId: z.number().int().describe('the endpoint id, from list_endpoints') },
      outputSchema: { eventId: z.string().describe("the ping's event id"), endpointId: z.number() },
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
  registerTypes(server);
  registerTrigger(server, ctx);
  registerEndpoints(server, ctx);
}
