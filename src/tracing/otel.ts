import type { IncomingHttpHeaders } from 'node:http';
import {
  type Attributes,
  type Context,
  defaultTextMapGetter,
  defaultTextMapSetter,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
  type Tracer,
} from '@opentelemetry/api';
import { ExportResultCode, W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BatchSpanProcessor,
  NodeTracerProvider,
  type ReadableSpan,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-node';
import type { DeliveryTrace, DeliveryTracer } from '../listener/tracing.js';
import type { TraceRef } from '../store/index.js';
import { packageVersion as version } from '../version.js';

import type { ExporterEvent } from './config.js';

const propagator = new W3CTraceContextPropagator();

/** The OTLP exporter, saying when it cannot export and when it can again (a collector that is down costs no delivery). */
class SayingExporter implements SpanExporter {
  #down = false;
  constructor(
    private readonly inner: OTLPTraceExporter,
    private readonly url: string,
    private readonly say: (event: ExporterEvent) => void,
  ) {}

  export(spans: ReadableSpan[], done: Parameters<SpanExporter['export']>[1]): void {
    this.inner.export(spans, (result) => {
      if (result.code === ExportResultCode.SUCCESS && this.#down) {
        this.#down = false;
        this.say({ state: 'up', url: this.url });
      } else if (result.code !== ExportResultCode.SUCCESS && !this.#down) {
        this.#down = true;
        this.say({ state: 'down', url: this.url, error: result.error?.message ?? 'the export failed' });
      }
      done(result);
    });
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush();
  }
}

const refOf = (span: Span): TraceRef => {
  const { traceId, spanId } = span.spanContext();
  return { traceId, spanId };
};

/** One delivery's spans: the server span, and a child per step (see DeliveryTrace). */
class OtelDeliveryTrace implements DeliveryTrace {
  readonly ref: TraceRef;
  readonly #context: Context;

  constructor(
    private readonly tracer: Tracer,
    private readonly span: Span,
    parent: Context,
  ) {
    this.ref = refOf(span);
    this.#context = trace.setSpan(parent, span);
  }

  step(name: string, attributes: Attributes = {}) {
    const child = this.tracer.startSpan(name, { kind: SpanKind.INTERNAL, attributes }, this.#context);
    return (more: Attributes = {}) => {
      child.setAttributes(more);
      child.end();
    };
  }

  forward(url: string) {
    const target = new URL(url);
    const child = this.tracer.startSpan(
      'POST',
      {
        kind: SpanKind.CLIENT,
        attributes: {
          'http.request.method': 'POST',
          'url.full': url,
          'server.address': target.hostname,
          'server.port': Number(target.port || (target.protocol === 'https:' ? 443 : 80)),
        },
      },
      this.#context,
    );
    const headers: Record<string, string> = {};
    propagator.inject(trace.setSpan(this.#context, child), headers, defaultTextMapSetter);
    return {
      headers,
      end: (status: number | null, error?: string) => {
        if (status !== null) child.setAttribute('http.response.status_code', status);
        if (error) child.setAttribute('error.type', error);
        if (status === null || status >= 400) child.setStatus({ code: SpanStatusCode.ERROR, message: error });
        child.end();
      },
    };
  }

  propagate(): Record<string, string> {
    const headers: Record<string, string> = {};
    propagator.inject(this.#context, headers, defaultTextMapSetter);
    return headers;
  }

  end(status: number, attributes: Attributes): void {
    this.span.setAttributes({ ...attributes, 'http.response.status_code': status });
    if (status >= 500) this.span.setStatus({ code: SpanStatusCode.ERROR });
    this.span.end();
  }
}

export interface OtelTracing extends DeliveryTracer {
  /** Exports what is left, and stops. */
  shutdown(): Promise<void>;
}

/** Tracing over OTLP/HTTP to `url` (the traces endpoint, `/v1/traces` included), as `serviceName`. */
export function startOtelTracing(url: string, serviceName: string, say: (event: ExporterEvent) => void): OtelTracing {
  const exporter = new SayingExporter(new OTLPTraceExporter({ url }), url, say);
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': serviceName, 'service.version': version }),
    // Spans go out in batches, off a delivery's path: a slow or absent collector never holds one up.
    spanProcessors: [new BatchSpanProcessor(exporter, { scheduledDelayMillis: 500 })],
  });
  const tracer = provider.getTracer('clockhook', version);
  return {
    start(headers: IncomingHttpHeaders, request) {
      const parent = propagator.extract(ROOT_CONTEXT, headers, defaultTextMapGetter);
      const links = request.linkTo
        ? [{ context: { ...request.linkTo, traceFlags: 1 }, attributes: { 'clockhook.link': 'replay of' } }]
        : [];
      const span = tracer.startSpan(
        `${request.method} ${request.path}`,
        {
          kind: SpanKind.SERVER,
          links,
          attributes: { 'http.request.method': request.method, 'url.path': request.path, 'url.scheme': 'http' },
        },
        parent,
      );
      return new OtelDeliveryTrace(tracer, span, parent);
    },
    shutdown: () => provider.shutdown(),
  };
}
