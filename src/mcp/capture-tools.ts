// The tools over the capture store of this folder: list, get, diff, wait for the next, replay.
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { headerDiff, jsonDiff } from '../shared/json-diff.js';
import { connectToListen, OUTCOMES, parseSince, selectCaptures, wholeCapture } from '../captures/index.js';
import { isDomainEventType, PING_EVENT_TYPE, unknownTypeWords } from '../contract/index.js';
import type { Capture, StoreReading } from '../store/index.js';
import { storiesOf } from '../story/index.js';
import { listenHere, type McpContext, readStore } from './context.js';
import { captureLine, captureSummary, MCP_TYPE_LISTING, result, UNTRUSTED } from './present.js';

const READ_ONLY = { readOnlyHint: true, openWorldHint: false } as const;
const capture = z.looseObject({ id: z.string() });

function checkedType(type: string | undefined): string | undefined {
  if (type !== undefined && type !== PING_EVENT_TYPE && !isDomainEventType(type))
    throw new Error(`type: ${unknownTypeWords(type, MCP_TYPE_LISTING)}.`);
  return type;
}

function named(reading: StoreReading, id: string): Capture {
  const found = reading.captures.find((c) => c.id === id);
  if (!found) throw new Error(`No capture ${id} in ${reading.path}: list_captures shows the ones there.`);
  return found;
}

/** A capture whole, as `captures show --json` gives it, with its story. */
async function whole(reading: StoreReading, found: Capture) {
  return wholeCapture(found, await reading.body(found), storiesOf(reading.captures));
}

const answered = (c: Capture) => c.forward !== undefined || c.rejected !== null;

/** Polls the store until a capture `match` takes has been answered, or the time is up. */
async function nextAnswered(ctx: McpContext, match: (c: Capture) => boolean, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const reading = await readStore(ctx);
    const found = reading.captures.findLast((c) => match(c) && answered(c));
    if (found) return { reading, found };
    if (Date.now() >= deadline) return null;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

function registerList(server: McpServer, ctx: McpContext): void {
  server.registerTool(
    'list_captures',
    {
      title: 'List captures',
      description:
        'The deliveries clockhook listen captured in this folder, newest first, each with what it was (first delivery, retry n, duplicate, replay) and its event state. status "failed": each event whose latest delivery or replay did not get a 2xx.',
      inputSchema: {
        type: z.string().optional().describe('an event type, e.g. punch.created'),
        status: z.enum(OUTCOMES as ['2xx', 'failed', 'rejected']).optional(),
        since: z.string().optional().describe('10m, 2h, 1d, or an ISO time'),
        limit: z.number().int().min(1).max(1000).default(20),
      },
      outputSchema: { captures: z.array(capture) },
      annotations: READ_ONLY,
    },
    async ({ type, status, since, limit }) => {
      const from = since === undefined ? undefined : parseSince(since, Date.now());
      if (from === null) throw new Error(`since ${since}: give 30s, 10m, 2h, 1d, or an ISO time.`);
      const reading = await readStore(ctx);
      const stories = storiesOf(reading.captures);
      const filter = { type: checkedType(type), status, since: from, limit };
      const captures = selectCaptures(reading.captures, filter, stories).map((c) => captureSummary(c, stories));
      const text = captures.length === 0 ? 'No captures match.' : captures.map(captureLine).join('\n');
      return result(text, { captures });
    },
  );
}

function registerGetAndDiff(server: McpServer, ctx: McpContext): void {
  server.registerTool(
    'get_capture',
    {
      title: 'Get a capture',
      description:
        "One capture whole: the request (headers, the whole body), the app's answer, the signature verdict, and its story.",
      inputSchema: { id: z.string().describe('a capture id, cap_…') },
      outputSchema: { capture, untrusted: z.string() },
      annotations: READ_ONLY,
    },
    async ({ id }) => {
      const reading = await readStore(ctx);
      const found = named(reading, id);
      const shown = await whole(reading, found);
      const text = `${captureLine(captureSummary(found, storiesOf(reading.captures)))}\n${UNTRUSTED}`;
      return result(text, { capture: shown, untrusted: UNTRUSTED });
    },
  );
  server.registerTool(
    'diff_captures',
    {
      title: 'Diff two captures',
      description:
        'What differs between two captures: each JSON path of the bodies with its old and new value, then the headers.',
      inputSchema: { a: z.string().describe('the earlier capture id'), b: z.string().describe('the later capture id') },
      outputSchema: {
        body: z.array(z.looseObject({ path: z.string() })),
        headers: z.array(z.looseObject({ path: z.string() })),
        untrusted: z.string(),
      },
      annotations: READ_ONLY,
    },
    async ({ a, b }) => {
      const reading = await readStore(ctx);
      const [before, after] = [named(reading, a), named(reading, b)];
      const parse = (bytes: Buffer) => {
        try {
          return JSON.parse(bytes.toString('utf8')) as unknown;
        } catch {
          return bytes.toString('base64');
        }
      };
      const body = jsonDiff(parse(await reading.body(before)), parse(await reading.body(after)));
      const headers = headerDiff(before.headers, after.headers);
      const text = `${body.length} body path(s) and ${headers.length} header(s) differ.\n${UNTRUSTED}`;
      return result(text, { body, headers, untrusted: UNTRUSTED });
    },
  );
}

function registerWait(server: McpServer, ctx: McpContext): void {
  server.registerTool(
    'wait_for_delivery',
    {
      title: 'Wait for a delivery',
      description:
        "Waits for the next capture of a type or an event id that arrives after the call (an event id already captured returns its newest capture at once), and returns it once the app has answered, with the app's answer.",
      inputSchema: {
        type: z.string().optional(),
        eventId: z.string().optional(),
        timeoutMs: z.number().int().min(100).max(120_000).default(30_000),
      },
      outputSchema: { arrived: z.boolean(), capture: capture.optional(), untrusted: z.string() },
      annotations: READ_ONLY,
    },
    async ({ type, eventId, timeoutMs }) => {
      checkedType(type);
      const { captures } = await readStore(ctx);
      const before = new Set(captures.map((c) => c.id));
      const seenEvent = eventId !== undefined && captures.some((c) => c.envelope?.id === eventId);
      const match = (c: Capture) =>
        (seenEvent || !before.has(c.id)) &&
        (eventId === undefined || c.envelope?.id === eventId) &&
        (type === undefined || c.envelope?.type === type);
      const got = await nextAnswered(ctx, match, timeoutMs);
      if (!got) return result(`Nothing arrived in ${timeoutMs} ms.`, { arrived: false, untrusted: UNTRUSTED });
      const shown = await whole(got.reading, got.found);
      const text = `${captureLine(captureSummary(got.found, storiesOf(got.reading.captures)))}\n${UNTRUSTED}`;
      return result(text, { arrived: true, capture: shown, untrusted: UNTRUSTED });
    },
  );
}

function registerReplay(server: McpServer, ctx: McpContext): void {
  server.registerTool(
    'replay',
    {
      title: 'Replay a capture',
      description:
        "Sends a capture to the app again through the running listen, re-signed with the current time (or as-is, with its original signature), optionally with an edited body; returns the replay's capture and the app's status.",
      inputSchema: {
        captureId: z.string(),
        mode: z.enum(['resign', 'asis']).default('resign'),
        body: z.string().optional().describe('an edited body (re-signed only)'),
      },
      outputSchema: { replayId: z.string(), status: z.number().nullable(), capture: capture.optional() },
      annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false },
    },
    async ({ captureId, mode, body }) => {
      if (mode === 'asis' && body !== undefined)
        throw new Error('An edited body cannot go as-is: its old signature would not match. Use mode "resign".');
      const listen = await listenHere(ctx);
      const original = named(await readStore(ctx), captureId);
      const connection = await connectToListen(listen.inspector);
      const outcome = await connection
        .replay(original, { asIs: mode === 'asis', body })
        .finally(() => connection.close());
      if (outcome.error || !outcome.replayId)
        throw new Error(`The replay was not sent: ${outcome.error ?? 'no capture made'}.`);
      const replayId = outcome.replayId;
      const got = await nextAnswered(ctx, (c) => c.id === replayId, 5_000);
      const summary = got ? captureSummary(got.found, storiesOf(got.reading.captures)) : undefined;
      const text = summary ? captureLine(summary) : `Replayed as ${replayId}: the app answered ${outcome.status}.`;
      return result(text, { replayId, status: outcome.status, ...(summary ? { capture: summary } : {}) });
    },
  );
}

/** The tools over the capture store. */
export function registerCaptureTools(server: McpServer, ctx: McpContext): void {
  registerList(server, ctx);
  registerGetAndDiff(server, ctx);
  registerWait(server, ctx);
  registerReplay(server, ctx);
}
