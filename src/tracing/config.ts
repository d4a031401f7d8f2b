import { OptionError } from '../errors.js';
import { isHttpUrl } from '../http/index.js';
/** Where spans go and under what service name; null: tracing is off (nothing of OpenTelemetry is loaded). */
export interface TracingConfig {
  /** The OTLP/HTTP traces endpoint, `/v1/traces` included. */
  url: string;
  serviceName: string;
}

/** `--otlp http://localhost:4318` is a base URL, as OTEL_EXPORTER_OTLP_ENDPOINT is: the traces path goes after it. */
const tracesUrl = (base: string) => `${base.replace(/\/+$/, '')}/v1/traces`;

function checked(url: string, from: string): string {
  if (!isHttpUrl(url))
    throw new OptionError(`${from} must be an http(s) URL, such as http://localhost:4318 (got ${url}).`);
  return url;
}

/**
 * Tracing's settings, from `--otlp <base URL>`, else OpenTelemetry's own environment variables
 * (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as it is, OTEL_EXPORTER_OTLP_ENDPOINT with `/v1/traces` added, and
 * OTEL_SERVICE_NAME); off with neither, or with OTEL_SDK_DISABLED=true. A TypeError says what is wrong.
 */
export function tracingConfig(
  flag: string | undefined,
  env: NodeJS.ProcessEnv,
  defaultServiceName: string,
): TracingConfig | null {
  const serviceName = env.OTEL_SERVICE_NAME || defaultServiceName;
  if (flag !== undefined) return { url: tracesUrl(checked(flag, '--otlp')), serviceName };
  if (env.OTEL_SDK_DISABLED === 'true') return null;
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  if (traces) return { url: checked(traces, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'), serviceName };
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (base) return { url: tracesUrl(checked(base, 'OTEL_EXPORTER_OTLP_ENDPOINT')), serviceName };
  return null;
}

/** Whether spans reach the collector: said once when they stop, and once when they reach it again. */
export type ExporterEvent = { state: 'down'; url: string; error: string } | { state: 'up'; url: string };
