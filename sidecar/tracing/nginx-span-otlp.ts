import type { NginxSpanRecord } from './nginx-span-record.js';

/**
 * nginx's span records as an OTLP `ExportTraceServiceRequest` (opentelemetry-proto's
 * trace/v1), encoded straight from the records: one ResourceSpans (service.name "gateway"), one
 * ScopeSpans ("gateway-nginx"), a Span per record: server kind, named for its method, with
 * http.request.method, url.path, http.response.status_code, enduser.id and gateway.auth.method.
 * Why not the SDK's span objects and serializer: at sampling 1.0 every request nginx answers is
 * a span, and a ReadableSpan then protobufjs over it cost 4.5 µs a span in the sidecar
 * (docs/decisions/20261203-nginx-span-export.md). The bytes are held equal, decoded with the
 * official definitions, to the SDK serializer's of the same spans
 * (test/unit/tracing/nginx-span-otlp.test.ts).
 */
export function encodeNginxSpans(records: readonly NginxSpanRecord[]): Uint8Array {
  const spans = new Writer(records.length * 256 + 64);
  const one = scratch;
  for (const record of records) {
    one.at = 0;
    // UTF-8 takes at most 3 bytes a UTF-16 unit; ids, times and tags fit in the 512.
    const text = record.path.length + (record.clientId?.length ?? 0);
    one.reserve(512 + 3 * (text + record.method.length + (record.authMethod?.length ?? 0)));
    writeSpan(one, record);
    spans.reserve(one.at + 6);
    spans.tag(2, LEN);
    spans.varint(one.at);
    spans.copy(one.buf, one.at);
  }
  // ScopeSpans { scope = 1; spans = 2 } inside ResourceSpans { resource = 1; scope_spans = 2 }.
  const scopeLength = SCOPE.length + spans.at;
  const resourceSpansLength = RESOURCE.length + 1 + varintSize(scopeLength) + scopeLength;
  const out = new Writer(resourceSpansLength + 16);
  out.tag(1, LEN);
  out.varint(resourceSpansLength);
  out.bytes(RESOURCE);
  out.tag(2, LEN);
  out.varint(scopeLength);
  out.bytes(SCOPE);
  out.copy(spans.buf, spans.at);
  return out.buf.subarray(0, out.at);
}

const VARINT = 0;
const FIXED64 = 1;
const LEN = 2;

const varintSize = (value: number) =>
  value < 0x80 ? 1 : value < 0x4000 ? 2 : value < 0x200000 ? 3 : value < 0x10000000 ? 4 : 5;

class Writer {
  buf: Buffer;
  at = 0;
  constructor(size: number) {
    this.buf = Buffer.allocUnsafe(size);
  }
  reserve(more: number): void {
    if (this.at + more <= this.buf.length) return;
    const bigger = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.at + more));
    this.buf.copy(bigger, 0, 0, this.at);
    this.buf = bigger;
  }
  varint(value: number): void {
    let v = value;
    while (v > 0x7f) {
      this.buf[this.at++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    this.buf[this.at++] = v;
  }
  tag(field: number, wire: number): void {
    this.varint((field << 3) | wire);
  }
  bytes(bytes: Uint8Array): void {
    this.buf.set(bytes, this.at);
    this.at += bytes.length;
  }
  copy(from: Buffer, length: number): void {
    from.copy(this.buf, this.at, 0, length);
    this.at += length;
  }
  /** A bytes field from lower-case hex (the record's ids, checked as hex when read). */
  hexField(field: number, hex: string): void {
    this.tag(field, LEN);
    this.varint(hex.length / 2);
    this.at += this.buf.write(hex, this.at, 'hex');
  }
  fixed64Nanos(field: number, ms: number): void {
    this.tag(field, FIXED64);
    this.buf.writeBigUInt64LE(BigInt(ms) * 1_000_000n, this.at);
    this.at += 8;
  }
  /** Span.attributes (9): KeyValue { key = 1; value = 2: AnyValue { string_value = 1 } }. */
  stringAttribute(key: Uint8Array, value: string, field = 9): void {
    const length = Buffer.byteLength(value);
    const any = 1 + varintSize(length) + length;
    this.tag(field, LEN);
    this.varint(key.length + 1 + varintSize(any) + any);
    this.bytes(key);
    this.tag(2, LEN);
    this.varint(any);
    this.tag(1, LEN);
    this.varint(length);
    this.at += this.buf.write(value, this.at);
  }
}

/** One span's bytes, reused (grown for a record that needs more). */
const scratch = new Writer(16 * 1024);

const encodeKey = (key: string) => {
  const name = Buffer.from(key);
  return Buffer.concat([Buffer.from([(1 << 3) | LEN, name.length]), name]);
};
const PATH_KEY = encodeKey('url.path');
const CLIENT_KEY = encodeKey('enduser.id');

function encoded(write: (w: Writer) => void): Buffer {
  const w = new Writer(256);
  write(w);
  return Buffer.from(w.buf.subarray(0, w.at));
}

// Resource { attributes = 1 } with service.name; InstrumentationScope { name = 1 }.
const RESOURCE = encoded((w) => {
  const resource = encoded((r) => r.stringAttribute(encodeKey('service.name'), 'gateway', 1));
  w.tag(1, LEN);
  w.varint(resource.length);
  w.bytes(resource);
});
const SCOPE = encoded((w) => {
  const name = Buffer.from('gateway-nginx');
  w.tag(1, LEN);
  w.varint(name.length + 2);
  w.tag(1, LEN);
  w.varint(name.length);
  w.bytes(name);
});

// The parts many spans share, encoded once: name, kind and method attribute by method; the
// status-code attribute and the span's status by HTTP status; the auth-method attribute.
const memo = <T>(make: (key: T) => Buffer) => {
  const made = new Map<T, Buffer>();
  return (key: T) => {
    let bytes = made.get(key);
    if (!bytes) {
      bytes = make(key);
      if (made.size < 1024) made.set(key, bytes);
    }
    return bytes;
  };
};
const byMethod = memo((method: string) =>
  encoded((w) => {
    const name = Buffer.from(`gateway ${method}`);
    w.tag(5, LEN);
    w.varint(name.length);
    w.bytes(name);
    w.tag(6, VARINT);
    w.varint(2); // SPAN_KIND_SERVER (the API's SpanKind.SERVER, 1, is the proto's 2)
    w.stringAttribute(encodeKey('http.request.method'), method);
  }),
);
const byStatus = memo((status: number) =>
  encoded((w) => {
    // KeyValue with AnyValue { int_value = 3 }.
    const key = encodeKey('http.response.status_code');
    const any = 1 + varintSize(status);
    w.tag(9, LEN);
    w.varint(key.length + 2 + any);
    w.bytes(key);
    w.tag(2, LEN);
    w.varint(any);
    w.tag(3, VARINT);
    w.varint(status);
    if (status >= 500) {
      // Status { code = 3 }: STATUS_CODE_ERROR for a 5xx; unset (absent) otherwise.
      w.tag(15, LEN);
      w.varint(2);
      w.tag(3, VARINT);
      w.varint(2);
    }
  }),
);
const byAuthMethod = memo((method: string) =>
  encoded((w) => w.stringAttribute(encodeKey('gateway.auth.method'), method)),
);

function writeSpan(w: Writer, record: NginxSpanRecord): void {
  w.hexField(1, record.traceId);
  w.hexField(2, record.spanId);
  if (record.parentId !== undefined) w.hexField(4, record.parentId);
  w.bytes(byMethod(record.method));
  w.fixed64Nanos(7, record.startMs);
  w.fixed64Nanos(8, record.endMs);
  w.stringAttribute(PATH_KEY, record.path);
  w.bytes(byStatus(record.status));
  if (record.clientId !== undefined) w.stringAttribute(CLIENT_KEY, record.clientId);
  if (record.authMethod !== undefined) w.bytes(byAuthMethod(record.authMethod));
}
