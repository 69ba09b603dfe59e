import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';

// The official OTLP protobuf definitions (opentelemetry-proto), as compiled by protobufjs into
// @opentelemetry/otlp-transformer: the receiver decodes with them, not with a schema of its own.
const require = createRequire(import.meta.url);
const { opentelemetry } = require('@opentelemetry/otlp-transformer/build/src/generated/root.js');
const ExportTraceServiceRequest = opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
const ExportTraceServiceResponse =
  opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse;

/** One received span, ids as lower-case hex, attributes as plain values. */
export interface ReceivedSpan {
  name: string;
  traceId: string;
  spanId: string;
  /** '' for a root span. */
  parentSpanId: string;
  kind: number;
  attributes: Record<string, string | number | boolean>;
  service: string;
}

/** A collector stand-in: OTLP/HTTP protobuf on POST /v1/traces, every span kept. */
export interface OtlpReceiver {
  /** The traces URL to export to. */
  url: string;
  spans: ReceivedSpan[];
  /** The raw bodies, for searching for secrets the decoder might not show. */
  bodies: Buffer[];
  /** Resolves once `predicate` holds for the spans received (polling; rejects after `ms`). */
  waitFor(predicate: (spans: ReceivedSpan[]) => boolean, ms?: number): Promise<ReceivedSpan[]>;
  close(): Promise<void>;
}

const hex = (bytes: Uint8Array | undefined) => Buffer.from(bytes ?? []).toString('hex');

type AnyValue = {
  stringValue?: string;
  intValue?: number | { toNumber(): number };
  doubleValue?: number;
  boolValue?: boolean;
};

function plain(value: AnyValue | undefined): string | number | boolean {
  if (!value) return '';
  if (value.stringValue !== undefined && value.stringValue !== null) return value.stringValue;
  if (value.boolValue !== undefined && value.boolValue !== null) return value.boolValue;
  if (value.doubleValue !== undefined && value.doubleValue !== null) return value.doubleValue;
  const int = value.intValue;
  if (int !== undefined && int !== null) return typeof int === 'number' ? int : int.toNumber();
  return '';
}

type KeyValue = { key: string; value?: AnyValue };
const attributesOf = (list: KeyValue[] | undefined) =>
  Object.fromEntries((list ?? []).map((kv) => [kv.key, plain(kv.value)]));

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const bodies: Buffer[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        res.writeHead(404).end();
        return;
      }
      const body = Buffer.concat(chunks);
      bodies.push(body);
      const decoded = ExportTraceServiceRequest.decode(body);
      for (const resourceSpans of decoded.resourceSpans ?? []) {
        const service = String(attributesOf(resourceSpans.resource?.attributes)['service.name']);
        for (const scope of resourceSpans.scopeSpans ?? []) {
          for (const span of scope.spans ?? []) {
            spans.push({
              name: span.name,
              traceId: hex(span.traceId),
              spanId: hex(span.spanId),
              parentSpanId: hex(span.parentSpanId),
              kind: span.kind,
              attributes: attributesOf(span.attributes),
              service,
            });
          }
        }
      }
      const answer = ExportTraceServiceResponse.encode({}).finish();
      res.writeHead(200, { 'Content-Type': 'application/x-protobuf' }).end(Buffer.from(answer));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1/traces`,
    spans,
    bodies,
    async waitFor(predicate, ms = 10_000) {
      const until = Date.now() + ms;
      while (!predicate(spans)) {
        if (Date.now() > until) {
          throw new Error(`spans not received in ${ms} ms: ${JSON.stringify(spans, null, 1)}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      return spans;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
