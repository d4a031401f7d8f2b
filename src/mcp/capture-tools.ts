// The tools that read the capture store of this folder: list, get (a part of the body at a time), diff.
import { type McpServer, z } from './sdk.js';
import { headerDiff, jsonDiff } from '../shared/json-diff.js';
import { parseSince, selectCaptures } from '../captures/index.js';
import { isDomainEventType, PING_EVENT_TYPE, unknownTypeWords } from '../contract/index.js';
import type { Capture, StoreReading } from '../store/index.js';
import { storiesOf } from '../story/index.js';
import { bodyInputs, ID_CHARS, short } from './bounds.js';
import { type McpContext, readStore } from './context.js';
import {
  captureLine,
  captureSummary,
  captureText,
  MCP_TYPE_LISTING,
  result,
  shownCapture,
  UNTRUSTED,
} from './present.js';
import * as schema from './schemas.js';
import { isUtf8 } from 'node:buffer';
import { withoutHopByHop } from '../http/index.js';

export const READ_ONLY = { readOnlyHint: true, openWorldHint: false } as const;

/** Inputs shared by the tools that name an event type or a capture. */
export const typeInput = z
  .string()
  .max(ID_CHARS)
  .describe('an event type, e.g. punch.created (list_event_types lists them)');
export const captureIdInput = z.string().max(ID_CHARS).describe('a capture id, cap_… (list_captures shows them)');
export const eventIdInput = z.string().max(ID_CHARS).describe("an event id, evt_… (the envelope's id)");

/** The type, when it is one of the contract's (or the ping's); else a tool error naming the close ones. */
export function checkedType(type: string | undefined): string | undefined {
  if (type !== undefined && type !== PING_EVENT_TYPE && !isDomainEventType(type))
    throw new Error(`type: ${unknownTypeWords(type, MCP_TYPE_LISTING)}.`);
  return type;
}

export function named(reading: StoreReading, id: string): Capture {
  const found = reading.captures.find((c) => c.id === id);
  if (!found) throw new Error(`No capture ${short(id)} in ${reading.path}: list_captures shows the ones there.`);
  return found;
}

function registerList(server: McpServer, ctx: McpContext): void {
  server.registerTool(
    'list_captures',
    {
      title: 'List captures',
      description:
        "The requests clockhook listen captured in this folder, newest first: what each was for its event (first delivery, retry n, duplicate, replay), the status the sender got, the gist of the app's answer when it did not take it, and the event's state.",
      inputSchema: {
        type: typeInput.optional(),
        eventId: eventIdInput.optional().describe('only the captures of this event id, evt_…'),
        status: z
          .enum(['2xx', 'failed', 'rejected'])
          .optional()
          .describe(
            '2xx: the app took it; failed: the newest capture of each event whose newest delivery failed, with no replay taken since (what needs fixing); rejected: clockhook refused it itself (a bad or missing signature, not an envelope), never forwarded',
          ),
        since: z.string().max(40).optional().describe('10m, 2h, 1d, or an ISO time'),
        limit: z.number().int().min(1).max(1000).default(20).describe('at most this many, the newest'),
      },
      outputSchema: { captures: z.array(schema.captureSummary) },
      annotations: READ_ONLY,
    },
    async ({ type, eventId, status, since, limit }) => {
      const from = since === undefined ? undefined : parseSince(since, Date.now());
      if (from === null) throw new Error(`since ${short(since ?? '')}: give 30s, 10m, 2h, 1d, or an ISO time.`);
      const reading = await readStore(ctx);
      const stories = storiesOf(reading.captures);
      const held =
        eventId === undefined ? reading.captures : reading.captures.filter((c) => c.envelope?.id === eventId);
      const filter = { type: checkedType(type), status, since: from, limit };
      const captures = selectCaptures(held, filter, stories).map((c) => captureSummary(c, stories));
      const none = reading.captures.length === 0 ? 'No captures yet.' : 'No captures match.';
      return result(captures.length === 0 ? none : captures.map(captureLine).join('\n'), { captures });
    },
  );
}

function registerGet(server: McpServer, ctx: McpContext): void {
  server.registerTool(
    'get_capture',
    {
      title: 'Get a capture',
      description:
        "One capture whole: the request's headers and body, the signature verdict, the app's answer (or why it did not answer), and its story. A body longer than maxBodyBytes comes a part at a time: truncated says so, nextBodyOffset where the next part begins.",
      inputSchema: { id: captureIdInput, ...bodyInputs },
      outputSchema: { capture: schema.wholeCapture, untrusted: schema.untrusted },
      annotations: READ_ONLY,
    },
    async ({ id, maxBodyBytes, bodyOffset }) => {
      const reading = await readStore(ctx);
      const stories = storiesOf(reading.captures);
      const shown = await shownCapture(reading, named(reading, id), stories, { max: maxBodyBytes, offset: bodyOffset });
      return result(captureText(shown), { capture: shown, untrusted: UNTRUSTED });
    },
  );
}

function registerDiff(server: McpServer, ctx: McpContext): void {
  const change = z.object({
    path: z.string().describe('a JSON path (data.note), or a header name'),
    before: z.unknown().optional().describe('the value in a; absent when a has none'),
    after: z.unknown().optional().describe('the value in b; absent when b has none'),
    cut: z.boolean().optional().describe('a value was longer than 4 KiB as JSON: shown as its JSON text, cut'),
  });
  server.registerTool(
    'diff_captures',
    {
      title: 'Diff two captures',
      description:
        'What differs between two captures: each JSON path of the bodies with its old and new value, then the headers.',
      inputSchema: {
        a: captureIdInput.describe('the earlier capture id, cap_…'),
        b: captureIdInput.describe('the later capture id, cap_…'),
      },
      outputSchema: {
        body: z.array(change),
        headers: z.array(change),
        leftOut: z.number().describe(`rows not shown: at most ${DIFF_ROWS} body paths are`),
        untrusted: schema.untrusted,
      },
      annotations: READ_ONLY,
    },
    async ({ a, b }) => {
      const reading = await readStore(ctx);
      const [before, after] = [named(reading, a), named(reading, b)];
      const rows = jsonDiff(diffable(await reading.body(before)), diffable(await reading.body(after)));
      const body = rows.slice(0, DIFF_ROWS).map(bounded);
      // The headers of each hop and of framing (connection, content-length, …) differ by how a request was sent,
      // not by what it said.
      const headers = headerDiff(sentHeaders(before), sentHeaders(after)).map(bounded);
      const lines = [...body, ...headers]
        .slice(0, 50)
        .map((d) => `${d.path}: ${inLine(d.before)} -> ${inLine(d.after)}`);
      const text = `${UNTRUSTED}\n${rows.length} body path(s) and ${headers.length} header(s) differ.\n${lines.join('\n')}`;
      return result(text, { body, headers, leftOut: rows.length - body.length, untrusted: UNTRUSTED });
    },
  );
}

/** A body as a diff compares it: its JSON; else its text when it is UTF-8; else its bytes as base64, said so. */
function diffable(bytes: Buffer): unknown {
  const text = bytes.toString('utf8');
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return isUtf8(bytes) ? text : `(base64) ${bytes.toString('base64')}`;
  }
}

/** A capture's headers without those of its hop and its framing. */
function sentHeaders(capture: Capture): Record<string, string | string[]> {
  const { 'content-length': _length, ...headers } = withoutHopByHop(capture.headers);
  return headers as Record<string, string | string[]>;
}

/** Body paths a diff shows at most. */
const DIFF_ROWS = 200;
/** Longest value a diff row shows, as JSON. */
const VALUE_CHARS = 4096;

/** A row of a diff with each value longer than VALUE_CHARS as JSON shown as its JSON text, cut. */
function bounded<T extends { path: string; before: unknown; after: unknown }>(row: T) {
  const long = (value: unknown) => value !== undefined && JSON.stringify(value).length > VALUE_CHARS;
  if (!long(row.before) && !long(row.after)) return row;
  const cutValue = (value: unknown) => (long(value) ? `${JSON.stringify(value).slice(0, VALUE_CHARS)}…` : value);
  return { ...row, before: cutValue(row.before), after: cutValue(row.after), cut: true };
}

/** A value of a diff in its line: JSON, 200 characters at most. */
const inLine = (value: unknown) => {
  const text = value === undefined ? '(none)' : JSON.stringify(value);
  return text.length > 200 ? `${text.slice(0, 199)}…` : text;
};

/** The tools that read the capture store. */
export function registerCaptureTools(server: McpServer, ctx: McpContext): void {
  registerList(server, ctx);
  registerGet(server, ctx);
  registerDiff(server, ctx);
}
