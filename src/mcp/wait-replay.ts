// The tools that act through the running listen of this folder: wait for the next delivery, replay one.
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { connectToListen, type ReplayOutcome } from '../captures/index.js';
import type { Capture, StoreReading } from '../store/index.js';
import { storiesOf } from '../story/index.js';
import { bodyInputs } from './bounds.js';
import { captureIdInput, checkedType, eventIdInput, named, READ_ONLY, typeInput } from './capture-tools.js';
import { listenHere, listenRunsHere, type McpContext, readStore } from './context.js';
import { captureText, result, shownCapture, UNTRUSTED } from './present.js';
import * as schema from './schemas.js';
import { LIMITS, MAX_DELIVERY_BYTES } from '../contract/index.js';
import { formatMiB } from '../size.js';

const answered = (c: Capture) => c.forward !== undefined || c.rejected !== null;

/** Reads the store every 200 ms until a capture `match` takes has been answered, or the time is up. */
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

async function shownResult(reading: StoreReading, found: Capture, maxBodyBytes: number) {
  const shown = await shownCapture(reading, found, storiesOf(reading.captures), { max: maxBodyBytes, offset: 0 });
  return result(captureText(shown), { arrived: true, capture: shown, untrusted: UNTRUSTED });
}

function registerWait(server: McpServer, ctx: McpContext): void {
  server.registerTool(
    'wait_for_delivery',
    {
      title: 'Wait for a delivery',
      description:
        "Waits for the next capture of a type or an event id and returns it, with the app's answer, once the app has answered. Without next, an event id already captured returns its newest capture at once; with next, only a capture that arrives after the call counts (the event's retry, or its redelivery).",
      inputSchema: {
        type: typeInput.optional(),
        eventId: eventIdInput.optional(),
        next: z
          .boolean()
          .default(false)
          .describe("only a capture that arrives after this call: wait for an event's retry or redelivery"),
        timeoutMs: z
          .number()
          .int()
          .min(100)
          .max(120_000)
          .default(LIMITS.receiverTimeoutMs)
          .describe('how long to wait, in ms'),
        maxBodyBytes: bodyInputs.maxBodyBytes,
      },
      outputSchema: {
        arrived: z.boolean().describe('false when nothing came within timeoutMs'),
        capture: schema.wholeCapture.optional(),
        untrusted: schema.untrusted,
      },
      annotations: READ_ONLY,
    },
    async ({ type, eventId, next, timeoutMs, maxBodyBytes }) => {
      checkedType(type);
      const reading = await readStore(ctx);
      const isIt = (c: Capture) =>
        (eventId === undefined || c.envelope?.id === eventId) && (type === undefined || c.envelope?.type === type);
      // An event already captured counts unless only what comes next does; a type, only what comes next.
      const before = new Set(eventId !== undefined && !next ? [] : reading.captures.map((c) => c.id));
      const counts = (c: Capture) => !before.has(c.id) && isIt(c);
      const held = reading.captures.findLast((c) => counts(c) && answered(c));
      if (held) return shownResult(reading, held, maxBodyBytes);
      await listenRunsHere(ctx); // nothing new can come without one: said now, not after the time-out
      const got = await nextAnswered(ctx, counts, timeoutMs);
      if (got) return shownResult(got.reading, got.found, maxBodyBytes);
      return result(`Nothing arrived in ${timeoutMs} ms.`, { arrived: false, untrusted: UNTRUSTED });
    },
  );
}

/** A replay as its text says it: the status, and what the app said or why it did not answer. */
function replayText(outcome: ReplayOutcome & { replayId: string }): string {
  const status = outcome.status === null ? 'no answer' : String(outcome.status);
  const said = outcome.answer ? `; the app said ${JSON.stringify(outcome.answer)}` : '';
  const why = outcome.error ? `; ${outcome.error}` : '';
  const story = outcome.story ? `; ${outcome.story.words}, event ${outcome.story.event.words}` : '';
  return `Replayed as ${outcome.replayId}: ${status} in ${outcome.durationMs} ms${said}${why}${story}\n${UNTRUSTED}`;
}

function registerReplay(server: McpServer, ctx: McpContext): void {
  server.registerTool(
    'replay',
    {
      title: 'Replay a capture',
      description:
        'Sends a capture to the app again through the running listen, re-signed with the current time (or as-is, with its original signature), optionally with an edited body. Answers as soon as the app does: the status, what the app said when it did not take it, or why it did not answer (a listen holds a replay up to its --wait-for-app for an app that is down).',
      inputSchema: {
        captureId: captureIdInput.describe('the capture to send again, cap_…'),
        mode: z
          .enum(['resign', 'asis'])
          .default('resign')
          .describe(
            'resign: signed anew with the current time (what a handler with a replay window accepts); asis: the original bytes and signature header',
          ),
        body: z.string().optional().describe('an edited body to send instead (re-signed only)'),
      },
      outputSchema: {
        replayId: z.string().describe("the replay's own capture, cap_…"),
        status: z.number().nullable().describe("the app's status; the listener's 502/504 when it did not answer"),
        durationMs: z.number(),
        answer: z.string().optional().describe("the gist of the app's answer when it did not take it"),
        error: z.string().optional().describe('why the app did not answer'),
        story: schema.captureStory.optional(),
        untrusted: schema.untrusted,
      },
      annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false },
    },
    async ({ captureId, mode, body }) => {
      if (mode === 'asis' && body !== undefined)
        throw new Error('An edited body cannot go as-is: its old signature would not match. Use mode "resign".');
      // listen keeps a delivery of at most MAX_DELIVERY_BYTES (413 beyond it): refused here, naming the bound.
      const size = body === undefined ? 0 : Buffer.byteLength(body, 'utf8');
      if (size > MAX_DELIVERY_BYTES)
        throw new Error(
          `body: ${formatMiB(size)} is over the ${formatMiB(MAX_DELIVERY_BYTES)} a listen takes in one delivery; send a smaller body.`,
        );
      const listen = await listenHere(ctx);
      const original = named(await readStore(ctx), captureId);
      const connection = await connectToListen(listen.inspector);
      const outcome = await connection
        .replay(original, { asIs: mode === 'asis', body })
        .finally(() => connection.close());
      if (!outcome.replayId) throw new Error(`The replay was not sent: ${outcome.error ?? 'no capture made'}.`);
      const { replayId, status, durationMs, answer, error, story } = outcome;
      return result(replayText({ ...outcome, replayId }), {
        ...{ replayId, status, durationMs },
        ...(answer ? { answer } : {}),
        ...(error ? { error } : {}),
        ...(story ? { story } : {}),
        untrusted: UNTRUSTED,
      });
    },
  );
}

/** The tools that act through the running listen. */
export function registerWaitAndReplay(server: McpServer, ctx: McpContext): void {
  registerWait(server, ctx);
  registerReplay(server, ctx);
}
