import { describe, expect, it } from 'vitest';
import { tracingConfig } from '../../src/tracing/config.js';

describe('tracing settings', () => {
  it('takes --otlp as a base URL, before the environment, and says the URL it was given when it is not one', () => {
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SERVICE_NAME: 'hooks' };
    expect(tracingConfig('http://localhost:4318/', env, 'clockhook-listen')).toEqual({
      url: 'http://localhost:4318/v1/traces',
      serviceName: 'hooks',
    });
    expect(() => tracingConfig('notaurl', {}, 'clockhook-listen')).toThrow(
      '--otlp must be an http(s) URL, such as http://localhost:4318 (got notaurl).',
    );
  });

  it("follows OpenTelemetry's variables: the traces endpoint as it is, the base with /v1/traces, and off when disabled", () => {
    const base = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };
    expect(tracingConfig(undefined, base, 'clockhook-relay')).toEqual({
      url: 'http://collector:4318/v1/traces',
      serviceName: 'clockhook-relay',
    });
    const traces = { ...base, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://otel.example.com/traces' };
    expect(tracingConfig(undefined, traces, 'clockhook-listen')?.url).toBe('https://otel.example.com/traces');
    expect(tracingConfig(undefined, { ...base, OTEL_SDK_DISABLED: 'true' }, 'clockhook-listen')).toBeNull();
    expect(tracingConfig(undefined, {}, 'clockhook-listen')).toBeNull();
  });
});
