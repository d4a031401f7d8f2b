import type { IncomingHttpHeaders } from 'node:http';
import type { Capture, TraceRef } from '../store/index.js';
import type { CaptureStory } from '../story/index.js';

/**
 * What the listener asks of tracing (`listen --otlp`), with no OpenTelemetry type in it: the implementation
 * (src/tracing/) is loaded only when tracing is on, so that with it off no module of it is loaded at all.
 */
export interface DeliveryTracer {
  /**
   * The server span of one request, a child of the `traceparent` it came with (the sender's, or a relay's);
   * a replay's links to the span of the delivery it repeats.
   */
  start(headers: IncomingHttpHeaders, request: { method: string; path: string; linkTo?: TraceRef }): DeliveryTrace;
}

export interface DeliveryTrace {
  readonly ref: TraceRef;
  /** A child span for a step (`verify`, `capture`); call what it returns when the step is done. */
  step(
    name: string,
    attributes?: Record<string, string | number | boolean>,
  ): (more?: Record<string, string | number | boolean>) => void;
  /**
   * The client span of the forward to `url`: the `traceparent` (and `tracestate`) the forwarded request
   * carries, so that the app's own spans are its children, and the function that ends it.
   */
  forward(url: string): { headers: Record<string, string>; end(status: number | null, error?: string): void };
  /** The `traceparent` (and `tracestate`) that make a next hop's span a child of this server span (the relay's, to its listener). */
  propagate(): Record<string, string>;
  /** Ends the server span with the status the sender got and what the delivery was. */
  end(status: number, attributes: Record<string, string | number | boolean>): void;
}

/** A delivery's span attributes once its sender is answered: what it was, after OpenTelemetry's conventions where they fit. */
export function deliveryAttributes(
  capture: Capture,
  story: CaptureStory,
  appStatus: number | null | undefined,
): Record<string, string | number | boolean> {
  return {
    'clockhook.capture.id': capture.id,
    'clockhook.delivery.kind': story.kind,
    ...(story.retry !== undefined ? { 'clockhook.delivery.retry': story.retry } : {}),
    'clockhook.signature': capture.signature.status,
    ...(capture.envelope?.type ? { 'clockhook.event.type': capture.envelope.type } : {}),
    ...(capture.envelope?.id
      ? { 'clockhook.event.id': capture.envelope.id, 'messaging.message.id': capture.envelope.id }
      : {}),
    ...(appStatus !== undefined && appStatus !== null ? { 'clockhook.app.status_code': appStatus } : {}),
    ...(capture.injected ? { 'clockhook.injected': capture.injected.join(', ') } : {}),
    ...(capture.replayOf ? { 'clockhook.replay_of': capture.replayOf } : {}),
  };
}
