import { createRequire } from 'node:module';
import type { SpanContext } from '@opentelemetry/api';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { describe, expect, test } from 'vitest';
import { NginxSpanEncoder } from '../../../sidecar/tracing/nginx-span-otlp.js';
import {
  MAX_PATH,
  type NginxSpanRecord,
  readNginxSpanBatch,
} from '../../../sidecar/tracing/nginx-span-record.js';

// The official OTLP definitions, compiled by protobufjs into the SDK's otlp-transformer.
const require = createRequire(import.meta.url);
const { opentelemetry } = require('@opentelemetry/otlp-transformer/build/src/generated/root.js');
const Request = opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
interface DecodedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  status?: { code?: number };
  attributes?: Array<{ key: string; value: unknown }>;
}
interface Decoded {
  resourceSpans: Array<{
    resource: { attributes: unknown };
    scopeSpans: Array<{ scope: { name: string }; spans?: DecodedSpan[] }>;
  }>;
}
const decoded = (bytes: Uint8Array): Decoded =>
  Request.toObject(Request.decode(bytes), { longs: String, bytes: String, defaults: false });

type Resource = ReadableSpan['resource'];

// The reference: a record as the SDK's own finished span (what the sidecar exported before it
// encoded nginx's records itself), serialized by the SDK.
const SAMPLED = 1;
const hrTime = (ms: number): [number, number] => [Math.floor(ms / 1000), (ms % 1000) * 1e6];

/** A record as the SDK's finished span: the gateway's, named for its method. */
function gatewaySpan(record: NginxSpanRecord, resource: Resource): ReadableSpan {
  const context: SpanContext = {
    traceId: record.traceId,
    spanId: record.spanId,
    traceFlags: SAMPLED,
  };
  const parent: SpanContext | undefined = record.parentId
    ? { traceId: record.traceId, spanId: record.parentId, traceFlags: SAMPLED, isRemote: true }
    : undefined;
  return {
    name: `gateway ${record.method}`,
    kind: 1, // SERVER
    spanContext: () => context,
    parentSpanContext: parent,
    startTime: hrTime(record.startMs),
    endTime: hrTime(record.endMs),
    duration: hrTime(record.endMs - record.startMs),
    // An error for the server when nginx (or the app behind it) answered 5xx.
    status: { code: record.status >= 500 ? 2 : 0 },
    attributes: {
      'http.request.method': record.method,
      'url.path': record.path,
      'http.response.status_code': record.status,
      ...(record.clientId === undefined ? {} : { 'enduser.id': record.clientId }),
      ...(record.authMethod === undefined ? {} : { 'gateway.auth.method': record.authMethod }),
    },
    links: [],
    events: [],
    ended: true,
    resource,
    instrumentationScope: { name: 'gateway-nginx' },
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
  };
}

const record = (more: Partial<NginxSpanRecord> = {}): NginxSpanRecord => ({
  traceId: '0af7651916cd43dd8448eb211c80319c',
  spanId: 'b7ad6b7169203331',
  parentId: undefined,
  startMs: 1_764_700_000_120,
  endMs: 1_764_700_000_123,
  method: 'GET',
  path: '/resources/json/service/session',
  status: 200,
  clientId: 'client-1',
  authMethod: 'apk',
  ...more,
});

const RECORDS: NginxSpanRecord[] = [
  record(),
  record({ parentId: '00f067aa0ba902b7', method: 'POST', status: 503, path: '/é/ü?no' }),
  record({ clientId: undefined, authMethod: undefined, status: 401, path: '' }),
  record({ spanId: 'ffffffffffffffff', endMs: 4_102_444_800_000, startMs: 4_102_444_799_999 }),
  record({ path: 'x'.repeat(2048), clientId: 'c'.repeat(300), status: 999 }),
  // The slow paths: a path cut to its first 2,048 characters, a client id percent-decoded.
  record({ path: `/${'é'.repeat(3000)}`, clientId: 'svc one/é', endMs: 1_764_700_000_999 }),
];

/**
 * The records as nginx's gateway_span_log sends them (a datagram of `<length>:<record>`), read
 * and encoded by the sidecar's own reader and encoder: the production path, bytes to bytes.
 */
function encodedBySidecar(records: readonly NginxSpanRecord[]): Uint8Array {
  const text = records
    .map((r) => {
      const line = [
        r.traceId,
        r.spanId,
        r.parentId ?? '',
        (r.endMs / 1000).toFixed(3),
        ((r.endMs - r.startMs) / 1000).toFixed(3),
        r.method,
        String(r.status),
        r.authMethod ?? '',
        r.clientId === undefined ? '' : encodeURIComponent(r.clientId),
        r.path,
      ].join(' ');
      return `${Buffer.byteLength(line)}:${line}`;
    })
    .join('');
  const encoder = new NginxSpanEncoder();
  expect(readNginxSpanBatch(Buffer.from(text), (view) => encoder.add(view))).toBe(0);
  expect(encoder.count).toBe(records.length);
  return encoder.take();
}

describe("nginx's span records encoded as OTLP", () => {
  test("decode, with the official definitions, to what the SDK's serializer makes of the same spans", () => {
    const resource = resourceFromAttributes({ 'service.name': 'gateway' });
    const sdk = ProtobufTraceSerializer.serializeRequest(
      RECORDS.map((r) => gatewaySpan({ ...r, path: r.path.slice(0, MAX_PATH) }, resource)),
    )!;
    const ours = decoded(encodedBySidecar(RECORDS));
    const theirs = decoded(sdk);
    // The SDK also writes the span's W3C flags (field 16, 0x100 "parent is remote" bits) and
    // empty lists; the content a collector shows is what must be equal.
    const content = (message: Decoded) =>
      message.resourceSpans.map((rs) => ({
        resource: rs.resource.attributes,
        scopes: rs.scopeSpans.map((ss) => ({
          scope: ss.scope.name,
          spans: (ss.spans ?? []).map((s) => ({
            traceId: s.traceId,
            spanId: s.spanId,
            parentSpanId: s.parentSpanId ?? '',
            name: s.name,
            kind: s.kind,
            start: s.startTimeUnixNano,
            end: s.endTimeUnixNano,
            status: s.status?.code ?? 0,
            attributes: Object.fromEntries((s.attributes ?? []).map((kv) => [kv.key, kv.value])),
          })),
        })),
      }));
    expect(content(ours)).toEqual(content(theirs));
    expect(content(ours)[0]?.scopes[0]?.spans).toHaveLength(RECORDS.length);
  });

  test('no records: one empty scope of the gateway service, still a valid request', () => {
    const message = decoded(new NginxSpanEncoder().take());
    expect(message.resourceSpans).toHaveLength(1);
    const scope = message.resourceSpans[0]?.scopeSpans[0];
    expect(scope?.scope.name).toBe('gateway-nginx');
    expect(scope?.spans ?? []).toEqual([]);
  });
});
