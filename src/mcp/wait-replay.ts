// The tools that act through the running listen of this folder: wait for the next delivery, replay one.
import { type McpServer, z } from './sdk.js';
import { connectToListen, type ReplayOutcome } from '../captures/index.js';
import type { Capture, StoreReading } from '../store/index.js';
import { storiesOf } from '../story/index.js';
import { bodyInputs } from './bounds.js';
import { captureIdInput, checkedType, eventIdInput, named, READ_ONLY, typeInput } from './capture-tools.js';
import { apiOf, listenHere, listenRunsHere, type McpContext, readStore } from './context.js';
import { isAnswered, storeSignature, waitForCapture } from './store-wait.js';
import { ApiError } from '../api/index.js';
import { captureText, result, shownCapture, UNTRUSTED } from './present.js';
import * as schema from './schemas.js';
import { durationWords, LIMITS, MAX_DELIVERY_BYTES } from '../contract/index.js';
import { formatMiB } from '../size.js';

/** How far back a wait for a type looks by default, with no trigger in this session: what came just before it. */
const LOOKBACK_MS = 10_000;

/**
 * Where a wait begins: a capture id or a time given as `since`; with `next`, now; else, for an event id, any of
 * its captures; for a type, this session's last trigger, or the last LOOKBACK_MS, whichever is earlier (a
 * delivery often comes before the assistant asks to wait for it).
 */
function startOf(
  ctx: McpContext,
  { eventId, next, since }: { eventId?: string; next: boolean; since?: string },
): (c: Capture) => boolean {
  if (since?.startsWith('cap_')) return (c) => c.id > since;
  if (since !== undefined) {
    const at = Date.parse(since);
    if (Number.isNaN(at)) throw new Error(`since: ${since} is neither a capture id (cap_…) nor a time (ISO 8601).`);
    return (c) => Date.parse(c.receivedAt) >= at;
  }
  const called = Date.now();
  if (next) return (c) => Date.parse(c.receivedAt) >= called;
  if (eventId !== undefined) return () => true;
  const from = Math.min(called - LOOKBACK_MS, ctx.lastTriggerAt ?? Infinity);
  return (c) => Date.parse(c.receivedAt) >= from;
}

/** An event id that neither the store nor the service knows: said now, not after the time-out. */
async function sayUnknownEvent(ctx: McpContext, eventId: string): Promise<void> {
  const api = await apiOf(ctx).catch(() => null);
  if (!api) return; // no service to ask: it may still come
  const known = await api.client.getEvent(eventId).then(
    () => true,
    (error: unknown) => !(error instanceof ApiError && error.status === 404),
  );
  if (!known)
    throw new Error(
      `eventId: no event ${eventId}, neither among the captures here nor on the service; list_captures or trigger gives one.`,
    );
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
        "Waits for a capture of a type or an event id and returns it, with the app's answer, once the app has answered. An event id already captured returns its newest capture at once; a type, one that came since this session's last trigger (or in the last 10 s); since sets where to wait from; with next, only a capture that arrives after the call counts (the event's retry, or its redelivery). An event id the service does not know is said at once.",
      inputSchema: {
        type: typeInput.optional(),
        eventId: eventIdInput.optional(),
        next: z
          .boolean()
          .default(false)
          .describe("only a capture that arrives after this call: wait for an event's retry or redelivery"),
        since: z
          .string()
          .optional()
          .describe(
            'where to wait from: a capture id (cap_…, what came after it) or an ISO time; by default, for a type, the last trigger of this session or the last 10 s',
          ),
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
    async ({ type, eventId, next, since, timeoutMs, maxBodyBytes }) => {
      checkedType(type);
      const started = startOf(ctx, { eventId, next, since });
      const isIt = (c: Capture) =>
        (eventId === undefined || c.envelope?.id === eventId) && (type === undefined || c.envelope?.type === type);
      const counts = (c: Capture) => isIt(c) && started(c) && isAnswered(c);
      const seen = await storeSignature(ctx);
      const reading = await readStore(ctx);
      const held = reading.captures.findLast(counts);
      if (held) return shownResult(reading, held, maxBodyBytes);
      await listenRunsHere(ctx); // nothing new can come without one: said now, not after the time-out
      if (eventId !== undefined && !reading.captures.some(isIt)) await sayUnknownEvent(ctx, eventId);
      // Ended, said, within a second when the folder's listen stops: nothing more can come then.
      const stillComing = () => listenRunsHere(ctx);
      const got = await waitForCapture(ctx, counts, { timeoutMs, seen, stillComing });
      if (got) return shownResult(got.reading, got.found, maxBodyBytes);
      return result(`Nothing arrived in ${timeoutMs} ms.`, { arrived: false, untrusted: UNTRUSTED });
    },
  );
}

/**
 * Why an as-is replay of `capture` may be refused: its signature was made longer ago than a handler's replay window
 * (the contract's 300 s) accepts; null when it was not.
 */
function staleSignature(capture: Capture): string | null {
  const t = capture.signature.timestamp;
  if (t === undefined) return null;
  const ageMs = Date.now() - t * 1000;
  if (ageMs <= LIMITS.replayWindowSeconds * 1000) return null;
  return `It went as-is, with a signature made ${durationWords(ageMs)} ago: past the ${LIMITS.replayWindowSeconds} s a handler's replay window accepts, so the app may refuse it for its age. Replay with mode "resign" to sign it anew`;
}

/**
 * listen's refusals of a replay whose own words name its flags or the page's buttons, in this tool's words: its
 * arguments, or a whole command for the user to run.
 */
const REFUSED: Record<string, (captureId: string) => string> = {
  no_secret: () =>
    'listen knows no endpoint secret, so the body cannot be re-signed: replay with mode "asis", or have the user restart listen with the secret ("npx clockhook listen --secret whsec_… --forward-to <your app>")',
  no_forward_target: () =>
    'listen forwards nowhere, so there is nothing to replay to: have the user restart it with the app ("npx clockhook listen --forward-to <your app>")',
  capture_not_found: (id) =>
    `listen no longer holds ${id} (cleared, or rotated out of its store); list_captures shows those held`,
};

/** A replay as its text says it: the status, and what the app said or why it did not answer, one sentence each. */
function replayText(outcome: ReplayOutcome & { replayId: string }, old: string | null = null): string {
  const status = outcome.story?.status ?? (outcome.status === null ? 'no answer' : String(outcome.status));
  const sentences = [
    `Replayed as ${outcome.replayId}${outcome.story ? ` (${outcome.story.words})` : ''}: ${status} in ${outcome.durationMs} ms`,
    outcome.answer && `The app said ${JSON.stringify(outcome.answer)}`,
    outcome.error,
    old,
    outcome.story && `Its event is ${outcome.story.event.words}`,
  ];
  const said = sentences.filter((sentence): sentence is string => Boolean(sentence)).map((s) => s.replace(/\.$/, ''));
  return `${UNTRUSTED}\n${said.join('. ')}.`;
}

/** Sends a replay through the folder's listen: its outcome once recorded, or an error that says why there is none. */
async function replayThroughListen(
  ctx: McpContext,
  { captureId, mode, body }: { captureId: string; mode: 'resign' | 'asis'; body?: string },
): Promise<{ original: Capture; outcome: ReplayOutcome & { replayId: string } }> {
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
  const outcome = await connection.replay(original, { asIs: mode === 'asis', body }).finally(() => connection.close());
  if (outcome.ended)
    throw new Error(
      `No result came: ${outcome.error}. Whether the app got the replay, list_captures shows once listen runs again.`,
    );
  const { replayId } = outcome;
  if (!replayId) {
    const why = REFUSED[outcome.code ?? '']?.(captureId) ?? outcome.error ?? 'no capture made';
    throw new Error(`The replay was not sent: ${why.replace(/\.$/, '')}.`);
  }
  return { original, outcome: { ...outcome, replayId } };
}

function registerReplay(server: McpServer, ctx: McpContext): void {
  server.registerTool(
    'replay',
    {
      title: 'Replay a capture',
      description:
        'Sends a capture to the app again through the running listen, re-signed with the current time (or as-is, with its original signature), optionally with an edited body. Answers as soon as the app does: the status, what the app said when it did not take it, or why it did not answer (a listen holds a replay for an app that is down, as long as it waits for one).',
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
      const { original, outcome } = await replayThroughListen(ctx, { captureId, mode, body });
      const { replayId, status, durationMs, answer, error, story } = outcome;
      const old = mode === 'asis' && outcome.story?.outcome !== '2xx' ? staleSignature(original) : null;
      return result(replayText(outcome, old), {
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
