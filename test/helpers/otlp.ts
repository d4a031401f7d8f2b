import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A span as an OTLP/HTTP exporter sends it (OTLP's JSON mapping), its attributes made plain values. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** 1 internal, 2 server, 3 client (OTLP's SpanKind). */
  kind: number;
  attributes: Record<string, unknown>;
  links: { traceId: string; spanId: string }[];
  serviceName: string;
}

/** Ids in OTLP/JSON are hex, as OpenTelemetry's exporters write them; base64 (protobuf's JSON mapping) is read too. */
const hex = (id: string | undefined) =>
  !id ? '' : /^[0-9a-f]+$/.test(id) ? id : Buffer.from(id, 'base64').toString('hex');

type AnyValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };
const plain = (value: AnyValue) =>
  value.stringValue ?? (value.intValue !== undefined ? Number(value.intValue) : (value.boolValue ?? value.doubleValue));
const attributesOf = (list: { key: string; value: AnyValue }[] = []) =>
  Object.fromEntries(list.map(({ key, value }) => [key, plain(value)]));

/**
 * An OTLP/HTTP traces receiver on a port (0: a free one): takes `POST /v1/traces` (JSON), answers 200, and keeps
 * every span. `close` and `listen` again on the same port play a collector that goes down and comes back.
 */
export async function startOtlpReceiver(port = 0) {
  const spans: ReceivedSpan[] = [];
  let server: Server | null = null;
  const receiver = {
    spans,
    url: '',
    /** Every span of one trace. */
    trace: (traceId: string) => spans.filter((s) => s.traceId === traceId),
    async listen(on = port) {
      server = createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (chunk: Buffer) => chunks.push(chunk));
        req.on('end', () => {
          const body = JSON.parse(Buffer.concat(chunks).toString() || '{}');
          for (const resource of body.resourceSpans ?? []) {
            const serviceName = String(attributesOf(resource.resource?.attributes)['service.name']);
            for (const scope of resource.scopeSpans ?? [])
              for (const span of scope.spans ?? [])
                spans.push({
                  traceId: hex(span.traceId),
                  spanId: hex(span.spanId),
                  parentSpanId: hex(span.parentSpanId),
                  name: span.name,
                  kind: span.kind,
                  attributes: attributesOf(span.attributes),
                  links: (span.links ?? []).map((l: { traceId: string; spanId: string }) => ({
                    traceId: hex(l.traceId),
                    spanId: hex(l.spanId),
                  })),
                  serviceName,
                });
          }
          res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        });
      });
      await new Promise<void>((resolve) => server!.listen(on, '127.0.0.1', resolve));
      port = (server!.address() as AddressInfo).port;
      receiver.url = `http://127.0.0.1:${port}`;
    },
    async close() {
      const closing = server;
      server = null;
      if (!closing) return;
      closing.closeAllConnections();
      await new Promise<void>((resolve) => closing.close(() => resolve()));
    },
  };
  await receiver.listen();
  return receiver;
}

export type OtlpReceiver = Awaited<ReturnType<typeof startOtlpReceiver>>;
