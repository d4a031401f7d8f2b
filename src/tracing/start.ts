import type { ExporterEvent, TracingConfig } from './config.js';
import type { OtelTracing } from './otel.js';
import { loadFeature } from '../optional.js';

/**
 * Starts exporting spans to the collector `config` names, `onExporter` told when they stop reaching it and when
 * they reach it again. OpenTelemetry's packages are loaded now (src/tracing/otel.ts): with tracing off, none is.
 */
export async function startTracing(
  config: TracingConfig,
  onExporter: (event: ExporterEvent) => void,
): Promise<OtelTracing> {
  const { startOtelTracing } = await loadFeature('tracing', () => import('./otel.js'));
  return startOtelTracing(config.url, config.serviceName, onExporter);
}
