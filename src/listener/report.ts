import type { Capture } from '../store/index.js';
import type { CaptureStory } from '../story/index.js';
import type { DeliveryReport } from './options.js';

/** The report of a request that was captured: `target` when it was forwarded, `answer` what the app said. */
export function reportOf(
  capture: Capture,
  outcome: {
    status: number;
    durationMs: number;
    error?: string;
    target?: string;
    answer?: string | null;
    waitedMs?: number;
  },
  story: CaptureStory,
): DeliveryReport {
  const { status, durationMs, error, target, answer } = outcome;
  return {
    captureId: capture.id,
    source: capture.source,
    eventId: capture.envelope?.id ?? null,
    // `||`: a body whose type is "" names no type either.
    type: capture.envelope?.type || null,
    signature: capture.signature.status,
    ...(capture.signature.reason ? { signatureReason: capture.signature.reason } : {}),
    story,
    duplicateOf: story.kind === 'duplicate' ? capture.duplicateOf : null,
    method: capture.method,
    target: target ?? null,
    status,
    durationMs,
    ...(error ? { error } : {}),
    ...(answer ? { answer } : {}),
    ...(capture.route !== undefined ? { route: capture.route } : {}),
    ...(capture.injected ? { injected: capture.injected } : {}),
    ...(outcome.waitedMs ? { waitedMs: outcome.waitedMs } : {}),
  };
}

/** The report of a request refused unread, the byte budget being full: nothing was captured. */
export function busyReport(method: string, source: Capture['source'], durationMs: number): DeliveryReport {
  return {
    captureId: null,
    source,
    eventId: null,
    type: null,
    signature: 'unchecked',
    story: null,
    duplicateOf: null,
    method,
    target: null,
    status: 503,
    durationMs,
    error: 'listener_busy',
  };
}
