// Tracing's flags, for listen and relay (--otlp, --trace-url), and what they say when spans stop reaching the
// collector and when they reach it again (docs/tracing.md).
import { type ExporterEvent, type TracingConfig, tracingConfig } from '../tracing/config.js';
import { startTracing } from '../tracing/start.js';
import type { OtelTracing } from '../tracing/otel.js';
import { UsageError } from '../errors.js';
import { PAINT, printLine, writeLine } from './output.js';
import type { Command } from 'commander';

export interface TracingFlags {
  otlp?: string;
  traceUrl?: string;
}

/** `--otlp`, or OpenTelemetry's environment: tracing's settings, or null when off (docs/tracing.md). */
export function tracingOption(flag: string | undefined, serviceName: string): TracingConfig | null {
  return tracingConfig(flag, process.env, serviceName);
}

/** listen's tracing flags, in its help. */
export function withTracing(command: Command): Command {
  return command
    .option(
      '--otlp <url>',
      'export a trace of each delivery over OTLP/HTTP to this collector (default: $OTEL_EXPORTER_OTLP_ENDPOINT)',
    )
    .option('--trace-url <template>', "the page links each trace there: 'http://localhost:16686/trace/{traceId}'");
}

/** `--trace-url`: a link with `{traceId}` in it. */
export function traceUrlOption(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (!value.includes('{traceId}') || !URL.canParse(value.replace('{traceId}', '0')))
    throw new UsageError(
      `--trace-url must be a URL with {traceId} in it, such as 'http://localhost:16686/trace/{traceId}' (got ${value}).`,
    );
  return value;
}

/** Spans stopped reaching the collector, or reach it again: one line each, for people or as JSON. */
export function sayTracing(event: ExporterEvent, json: boolean): void {
  if (json) return printLine({ event: 'tracing', ...event });
  if (event.state === 'down')
    writeLine(
      PAINT.warn(
        `tracing: spans do not reach ${event.url} (${event.error}); deliveries go on, and this is said again once they do`,
      ),
    );
  else writeLine(PAINT.ok(`tracing: spans reach ${event.url} again`));
}

/** The relay's tracer, loaded only when tracing is on (startTracing): with it off, nothing of OpenTelemetry is. */
export async function startTracer(config: TracingConfig | null, json: boolean): Promise<OtelTracing | null> {
  return config ? startTracing(config, (event) => sayTracing(event, json)) : null;
}
