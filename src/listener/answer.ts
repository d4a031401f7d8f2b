// The listener's own answers, when it does not pass the app's on: a request refused before it was read (the
// budget full), a capture refused or taken in capture-only mode, one that could not be stored.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { answerEarly, answerError } from '../http/index.js';
import { formatMiB } from '../size.js';
import { type Capture, newCaptureId } from '../store/index.js';
import { rejectionMessage } from './capture.js';
import type { Logger } from '../logger.js';
import type { Advisor } from './advice.js';
import type { DeliveryReport } from './options.js';
import { busyReport } from './report.js';

/** The bodies held fill the budget: 503 at once (the service retries), the rest dropped. Nothing is captured. */
export function refuseBusy(
  req: IncomingMessage,
  res: ServerResponse,
  { advisor, maxBufferedBytes, started }: { advisor: Advisor; maxBufferedBytes: number; started: number },
  report: (report: DeliveryReport) => void,
): void {
  const budget = formatMiB(maxBufferedBytes);
  advisor.busy(budget);
  const message = `clockhook holds as many request bodies as it may (${budget}, --max-buffer); retry later.`;
  answerEarly(req, res, 503, 'listener_busy', message, {
    requestId: newCaptureId(),
    headers: { 'retry-after': '10' },
  });
  report(busyReport(req.method ?? 'POST', 'delivery', Math.round(performance.now() - started)));
}

/** Step "answer" when the listener answers itself (the capture is durable): a refusal, or 200 in capture-only mode. Returns the status. */
export function answerItself(res: ServerResponse, capture: Capture, maxBodyBytes: number): number {
  const { rejected } = capture;
  if (rejected) {
    const message = rejectionMessage(capture, maxBodyBytes);
    // The rest of an oversized body is read and dropped for a bounded while, then the connection closes.
    answerEarly(res.req as IncomingMessage | undefined, res, rejected.statusCode, rejected.code, message, {
      requestId: capture.id,
    });
    return rejected.statusCode;
  }
  const text = JSON.stringify({ received: true, captureId: capture.id });
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
  return 200;
}

/** Not on disk: the service must retry, so 503 (and nothing that is not written is forwarded), said on stderr. */
export function answerUnstored(
  res: ServerResponse,
  capture: Capture,
  error: Error,
  { logger, store }: { logger: Logger; store: { path: string } },
): void {
  // The store's own refusal (its files are another process's now) has said why already.
  if (error.name !== 'StoreLockedError')
    logger.error(
      `Could not write the capture to ${store.path}: ${error.message}. Answering 503 so the service retries.`,
    );
  const message = 'clockhook could not store this delivery (disk full or read-only?); retry later.';
  answerError(res, 503, 'capture_failed', message, { requestId: capture.id });
}
