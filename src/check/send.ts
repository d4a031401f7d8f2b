import { describeConnectionError, postBytes } from '../http/index.js';
import { isTaken } from '../contract/index.js';

export interface SentRequest {
  headers: Record<string, string>;
  body: Buffer;
}

export type Answer =
  | { kind: 'answer'; status: number; body: string; durationMs: number; location?: string }
  | { kind: 'error'; error: string; code?: string; durationMs: number };

/** POSTs exact bytes to the app; never throws: a refused or timed-out request is an `error` answer. */
export async function postToReceiver(target: URL, { headers, body }: SentRequest, timeoutMs: number): Promise<Answer> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const timeout = AbortSignal.timeout(timeoutMs);
  try {
    // A receiver on localhost often has a certificate of its own making.
    const answer = await postBytes(target, headers, body, {
      signal: timeout,
      maxChars: 2000,
      rejectUnauthorized: false,
    });
    return {
      kind: 'answer',
      status: answer.status,
      body: answer.body,
      durationMs: elapsed(),
      ...(answer.location ? { location: answer.location } : {}),
    };
  } catch (caught) {
    const error = caught as NodeJS.ErrnoException;
    if (timeout.aborted)
      return { kind: 'error', error: `no answer within ${timeoutMs / 1000} s`, code: 'TIMEOUT', durationMs: elapsed() };
    return { kind: 'error', error: describeConnectionError(error, 'the app'), code: error.code, durationMs: elapsed() };
  }
}

/** Where a 3xx answer sends the sender (its Location, as given); undefined for any other answer. */
export const redirectTo = (answer: Answer) =>
  answer.kind === 'answer' && answer.status >= 300 && answer.status < 400 ? answer.location : undefined;

export function describeAnswer(answer: Answer): string {
  if (answer.kind === 'error') return `${answer.error} after ${answer.durationMs} ms`;
  const location = redirectTo(answer);
  return `${answer.status} in ${answer.durationMs} ms${location ? `, redirecting to ${location}` : ''}`;
}

export const is2xx = (answer: Answer) => answer.kind === 'answer' && isTaken(answer.status);
export const is5xx = (answer: Answer) => answer.kind === 'answer' && answer.status >= 500;
