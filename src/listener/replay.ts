import { resign } from '../contract/index.js';
import { errorMessage, HOP_BY_HOP } from '../http/index.js';
import { ActionError } from '../errors.js';
import { type Capture, type CaptureStore, cutBodyWords } from '../store/index.js';
import type { CaptureStory } from '../story/index.js';
import type { DirectRequest } from './direct.js';

export interface ReplayRequest {
  captureId: string;
  /** resign: current time and the endpoint secret; asis: the original bytes and header. */
  mode: 'resign' | 'asis';
  /** An edited body (resign only). */
  body?: string;
}

export interface ReplayResult {
  /** The replay's own capture. */
  captureId: string;
  /** The status the app answered, or the listener's own 502/504 when it did not answer. */
  statusCode: number;
  durationMs: number;
  /** Why the app did not answer (connection refused, and how long it was waited for), as the sender was told. */
  error?: string;
  /** The gist of the app's answer when it did not take the replay. */
  answer?: string;
  /** What the replay was for its event, and the event's state after it. */
  story?: CaptureStory;
}

/** A replay handed to the listener's `deliver`: the capture it repeats, and whether its body was changed. */
export interface Replaying {
  replayOf?: string;
  edited?: boolean;
  /** Not a replay: a delivery the listener sends itself as an injected fault (`["duplicate"]`). */
  injected?: string[];
}

/**
 * The bytes a replay sends (the edited body, else the stored one) and whether they differ from the stored
 * ones (an edited replay). An edited body goes even when the stored one can no longer be read.
 */
export async function replayBody(
  store: CaptureStore,
  original: Capture,
  body: string | undefined,
): Promise<{ bytes: Buffer; edited: boolean }> {
  const stored = await store.body(original).catch((error: Error) => {
    if (body !== undefined) return null;
    throw new ActionError('body_unavailable', `${error.message} Nothing was replayed.`);
  });
  if (body === undefined) return { bytes: stored as Buffer, edited: false };
  const bytes = Buffer.from(body, 'utf8');
  return { bytes, edited: stored === null || !bytes.equals(stored) };
}

/** The capture a replay repeats, once the replay is known to be possible; an ActionError says why not. */
export function replayable(
  original: Capture | undefined,
  { captureId, mode, body }: ReplayRequest,
  forwarding: boolean,
): Capture {
  if (!original) {
    throw new ActionError(
      'capture_not_found',
      `No capture ${captureId}: it was cleared or rotated out (--max-captures).`,
    );
  }
  if (!forwarding)
    throw new ActionError('no_forward_target', 'Nothing to replay to: start listen with --forward-to <your app>.');
  const cut = body === undefined ? cutBodyWords(original) : null;
  if (cut) throw new ActionError('body_truncated', `${cut}; nothing was replayed.`);
  if (mode === 'asis' && body !== undefined) {
    const message = 'An edited body cannot be sent as-is: its old signature would not match. Use resign.';
    throw new ActionError('asis_with_edit', message);
  }
  return original;
}

/**
 * The request a replay sends: the captured method, path and headers with `bytes`, re-signed with the
 * current time unless sent as-is (DESIGN: the app's replay window would refuse the old signature).
 */
export function replayRequest(
  original: Capture,
  bytes: Buffer,
  { mode, secret, now }: { mode: ReplayRequest['mode']; secret: string | null; now: number },
): DirectRequest {
  // The replay's capture records what it sends: the body's own length (an edit changes it); the hop's headers
  // (connection, keep-alive, …) are the forward's, and a diff leaves them aside.
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(original.headers))
    if (!HOP_BY_HOP.has(name) && name !== 'content-length') headers[name] = value;
  headers['content-length'] = String(bytes.length);
  if (mode === 'resign') {
    if (!secret) {
      throw new ActionError(
        'no_secret',
        'No endpoint secret is known, so the body cannot be re-signed. Pass --secret, or use "Replay as-is".',
      );
    }
    return {
      method: original.method,
      path: original.path,
      headers: resign(headers, bytes, { secret, now }),
      body: bytes,
    };
  }
  return { method: original.method, path: original.path, headers, body: bytes };
}

/**
 * What a replay got, as its asker is told: the status, and why the app did not answer (the message the sender
 * got) or the gist of what it said when it did not take it, with the replay's story.
 */
export function replayResult(
  replayed: Capture,
  answer: { status: number; body: Buffer },
  durationMs: number,
  story: CaptureStory,
): ReplayResult {
  const { forward } = replayed;
  const excerpt = story.answer;
  return {
    captureId: replayed.id,
    statusCode: answer.status,
    // The app's time as the record has it (measured once, by the forward); else the whole exchange's.
    durationMs: story.durationMs ?? Math.round(durationMs),
    ...(forward && forward.statusCode === null ? { error: errorMessage(answer.body) } : {}),
    ...(excerpt ? { answer: excerpt } : {}),
    story,
  };
}
