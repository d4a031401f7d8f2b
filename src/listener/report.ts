import type { Capture, CaptureForward, CaptureStore } from '../store/index.js';
import type { CaptureStory, StoryBook } from '../story/index.js';
import type { DeliveryReport } from './options.js';
import { type DeliveryTrace, deliveryAttributes } from './tracing.js';

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
    cut?: boolean;
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
    ...(outcome.cut ? { cut: true as const } : {}),
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

/** How a captured request ended, for its report: `forward`, where it went when it was forwarded. */
export interface Ending {
  status: number;
  /** When it arrived (performance.now()). */
  started: number;
  error?: string;
  forward?: CaptureForward;
}

/**
 * Tells how each captured request ended: its report to `onDelivery`, with its story as the store has it then,
 * and, with tracing on, the end of its server span (with the same story).
 */
export class Reporter {
  constructor(
    private readonly store: CaptureStore,
    private readonly stories: StoryBook,
    private readonly onDelivery: (report: DeliveryReport) => void,
  ) {}

  report(capture: Capture, { status, started, error, forward }: Ending, trace?: DeliveryTrace | null): void {
    const now = this.store.get(capture.id) ?? capture;
    const story = this.stories.captureStory(now);
    // The app's time is the record's (measured once, by the forward); one not forwarded has only its own.
    const durationMs = story.durationMs ?? Math.round(performance.now() - started);
    const outcome = {
      status,
      durationMs,
      error,
      target: forward?.target,
      answer: story.answer,
      waitedMs: forward?.waitedMs,
      cut: forward?.cut,
    };
    this.onDelivery(reportOf(capture, outcome, story));
    trace?.end(status, deliveryAttributes(now, story, forward?.statusCode));
  }
}
