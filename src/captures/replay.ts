import { LIMITS, resign } from '../contract/index.js';
import { withoutHopByHop } from '../http/index.js';
import { postBytes } from '../http/index.js';
import type { ReplayResult } from '../listener/index.js';
import { type Capture, cutBodyWords } from '../store/capture.js';
import type { CaptureStory } from '../story/index.js';

/** What one replay got. */
export interface ReplayOutcome {
  captureId: string;
  /** The replay's own capture, when it went through a running listen (which records it). */
  replayId: string | null;
  /** The app's status, or null when it did not answer. */
  status: number | null;
  durationMs: number;
  target: string;
  /** Why it was not sent, or why the app did not answer. */
  error?: string;
  /** Why listen refused to send it, as a code (`no_secret`, `capture_not_found`, …): for a surface's own words. */
  code?: string;
  /**
   * Its result cannot come: listen stopped (or the connection to it broke) after it was asked. The app may have
   * got it: the replay's capture, once listen runs again, says.
   */
  ended?: true;
  /** The gist of the app's answer when it did not take it (through a running listen). */
  answer?: string;
  /** What the replay was for its event, and the event's state after it (through a running listen). */
  story?: CaptureStory;
}

/** Headers of a captured request as they go out again: not those of its connection, its length or host. */
export function headersToSend(capture: Capture): Record<string, string | string[]> {
  const { 'content-length': _length, host: _host, ...headers } = withoutHopByHop(capture.headers);
  return headers;
}

/**
 * Sends a capture straight to `target` (no listen running): its bytes and headers, re-signed with `secret`
 * and the current time unless `asIs`. Nothing is stored.
 */
export function replayDirect(
  capture: Capture,
  body: Buffer,
  {
    target,
    secret,
    asIs,
    timeoutMs = LIMITS.receiverTimeoutMs,
  }: { target: string; secret: string | null; asIs: boolean; timeoutMs?: number },
): Promise<ReplayOutcome> {
  const headers = !asIs && secret ? resign(headersToSend(capture), body, { secret }) : headersToSend(capture);
  const url = new URL(target);
  const started = performance.now();
  const done = (status: number | null, error?: string): ReplayOutcome => ({
    captureId: capture.id,
    replayId: null,
    status,
    durationMs: Math.round(performance.now() - started),
    target: url.href,
    ...(error ? { error } : {}),
  });
  const cut = cutBodyWords(capture);
  if (cut) return Promise.resolve(done(null, `${cut}; nothing was sent`));
  // Local apps use self-signed certificates, as for listen's --forward-to.
  const options = { maxChars: 0, rejectUnauthorized: false, signal: AbortSignal.timeout(timeoutMs) };
  return postBytes(url, headers, body, options).then(
    (answer) => done(answer.status),
    (error: Error) => done(null, options.signal.aborted ? `no answer within ${timeoutMs} ms` : error.message),
  );
}

/** A result listen's inspector sends back for a request. */
type ActionResult = { ok: boolean; data?: any; error?: { message: string; code?: string }; ended?: true };

/**
 * The results of the requests sent on `socket`, by id. When listen stops (or the connection breaks) while one
 * waits, each waiting one ends at once, said, rather than waiting for an answer that cannot come; whether the app
 * got it is in listen's store once it runs again.
 */
function resultsOn(socket: import('ws').WebSocket) {
  const waiting = new Map<number, (message: ActionResult) => void>();
  let ended: string | null = null;
  const end = (why: string) => {
    ended ??= why;
    for (const [, settle] of waiting) settle({ ok: false, error: { message: ended }, ended: true });
    waiting.clear();
  };
  socket.on('message', (data) => {
    const message = JSON.parse(String(data)) as ActionResult & { type: string; id?: number };
    if (message.type === 'result' && typeof message.id === 'number') waiting.get(message.id)?.(message);
  });
  socket.on('close', () =>
    end('listen closed the connection before the replay had its answer (it stopped, or restarted)'),
  );
  socket.on('error', (error) =>
    end(`the connection to listen failed before the replay had its answer: ${error.message}`),
  );
  let next = 1;
  /** Sends `message` with an id of its own; its result, or why none can come. */
  return (message: Record<string, unknown>): Promise<ActionResult> =>
    new Promise((resolve) => {
      if (ended) return resolve({ ok: false, error: { message: ended }, ended: true });
      const id = next++;
      waiting.set(id, (result) => {
        waiting.delete(id);
        resolve(result);
      });
      socket.send(JSON.stringify({ ...message, id }));
    });
}

/**
 * A running listen's inspector, over its WebSocket: replays go through the listener (recorded as replays,
 * shown live in the page, forwarded to its --forward-to). `inspectorUrl` carries the token.
 */
export async function connectToListen(inspectorUrl: string) {
  const url = new URL(inspectorUrl);
  const { WebSocket } = await import('ws'); // loaded by a replay through a running listen only
  const socket = new WebSocket(`ws://${url.host}/ws?token=${url.searchParams.get('token') ?? ''}`);
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  const ask = resultsOn(socket);
  return {
    /** `body`: an edited body, sent re-signed (listen refuses one with `asIs`). */
    async replay(capture: Capture, { asIs, body }: { asIs: boolean; body?: string }): Promise<ReplayOutcome> {
      const started = performance.now();
      const mode = asIs ? 'asis' : 'resign';
      const answer = await ask({
        type: 'replay',
        captureId: capture.id,
        mode,
        ...(body === undefined ? {} : { body }),
      });
      const durationMs = Math.round(performance.now() - started);
      const target = capture.forward?.target ?? 'listen';
      if (!answer.ok)
        return {
          captureId: capture.id,
          replayId: null,
          status: null,
          durationMs,
          target,
          error: answer.error?.message,
          ...(answer.error?.code ? { code: answer.error.code } : {}),
          ...(answer.ended ? { ended: true as const } : {}),
        };
      const data = answer.data as ReplayResult;
      return {
        captureId: capture.id,
        replayId: data.captureId,
        status: data.statusCode,
        durationMs: data.durationMs,
        target,
        ...(data.error ? { error: data.error } : {}),
        ...(data.answer ? { answer: data.answer } : {}),
        ...(data.story ? { story: data.story } : {}),
      };
    },
    close: () => socket.close(),
  };
}
