import type { IncomingMessage, ServerResponse } from 'node:http';
import { answerError } from '../http/index.js';
import type { Capture, CaptureStore } from '../store/index.js';
import type { Advisor } from './advice.js';
import type { Aside } from './aside.js';
import type { Forwarder } from './forward.js';
import type { Reporter } from './report.js';
import { joinTargetPath } from './target.js';

/** One captured request on its way to the app: what the steps before made of it. */
export interface Exchange {
  req: IncomingMessage;
  res: ServerResponse;
  /** The capture as stored, durable. */
  capture: Capture;
  /** The raw body, as received. */
  bytes: Buffer;
  /** Its path under --path, appended to the target's. */
  relative: string;
  /** When it arrived (performance.now()). */
  started: number;
  aside: Aside;
}

/** What the forward step works with. */
export interface ForwardParts {
  store: CaptureStore;
  reporter: Reporter;
  advisor: Advisor;
}

/**
 * Steps "forward" and "answer" (the capture is durable): the exact bytes go to the app with http-proxy, its
 * answer goes back to the sender as it comes (or the listener's own 502/504 when the app did not answer), and
 * the capture records it. Returns the forward, or null when the app gave no answer.
 */
export async function forwardAndAnswer(forwarder: Forwarder, x: Exchange, parts: ForwardParts) {
  const { req, res, capture, bytes, relative, started, aside } = x;
  const path = joinTargetPath(forwarder.target, relative);
  const outcome = await aside.forward(req, forwarder.urlFor(path), () =>
    forwarder.forward(req, res, bytes, path, { keepAnswer: aside.keepsAnswer }),
  );
  await parts.store.update(capture.id, { forward: outcome.forward }, { lazy: true });
  if (outcome.kind === 'failed')
    answerError(res, outcome.statusCode, outcome.code, outcome.message, { requestId: capture.id });
  const status = outcome.kind === 'failed' ? outcome.statusCode : (outcome.forward.statusCode ?? 502);
  const answered = outcome.kind === 'answered';
  const held = aside.keepsAnswer && answered;
  const error = held ? 'injected timeout: the sender is not answered' : outcome.forward.error;
  parts.reporter.report(capture, { status, started, error, forward: outcome.forward }, aside.trace);
  parts.advisor.forwarded(outcome.forward, status, capture.signature, relative);
  return answered ? outcome.forward : null;
}
