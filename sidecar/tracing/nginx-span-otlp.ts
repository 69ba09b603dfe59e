import { clientIdOf, HEX_VALUE, type NginxSpanView, pathOf } from './nginx-span-record.js';

/**
 * nginx's span records as an OTLP `ExportTraceServiceRequest` (opentelemetry-proto's
 * trace/v1), encoded straight from the records' bytes as they are read: one ResourceSpans
 * (service.name "gateway"), one ScopeSpans ("gateway-nginx"), a Span per record: server kind,
 * named for its method, with http.request.method, url.path, http.response.status_code,
 * enduser.id and gateway.auth.method. Why not the SDK's span objects and serializer: at sampling
 * 1.0 every request nginx answers is a span, and a ReadableSpan then protobufjs over it cost
 * 4.5 µs a span in the sidecar, an object and strings per record 2 µs more
 * (docs/decisions/20261203-nginx-span-export.md). The bytes are held equal, decoded with the
 * official definitions, to the SDK serializer's of the same spans
 * (test/unit/tracing/nginx-span-otlp.test.ts).
 */
export class NginxSpanEncoder {
  private spans = new Writer(64 * 1024);
  /** Spans added since the last take. */
  count = 0;

  add(record: NginxSpanView): void {
    const { bytes } = record;
    const path = record.pathPlain ? null : pathOf(record);
    const [clientFrom, clientTo] = record.clientId;
    const client = clientFrom === clientTo || record.clientIdPlain ? null : clientIdOf(record)!;
    const method = byMethod(bytes, record.method);
    const status = byStatus(record.status);
    const auth =
      record.authMethod[0] === record.authMethod[1] ? null : byAuthMethod(bytes, record.authMethod);
    const pathLength = path === null ? record.path[1] - record.path[0] : Buffer.byteLength(path);
    const clientLength = client === null ? clientTo - clientFrom : Buffer.byteLength(client);
    // Tag, length and bytes: trace id 1+1+16, span id and parent 1+1+8, each time 1+8.
    const size =
      18 +
      10 +
      (record.parentAt < 0 ? 0 : 10) +
      method.length +
      2 * 9 +
      attributeSize(PATH_KEY, pathLength) +
      status.length +
      (clientFrom === clientTo ? 0 : attributeSize(CLIENT_KEY, clientLength)) +
      (auth === null ? 0 : auth.length);
    const w = this.spans;
    w.reserve(size + 6);
    // ScopeSpans.spans (2): one Span.
    w.tag(2, LEN);
    w.varint(size);
    w.hexBytes(1, bytes, record.traceAt, 32);
    w.hexBytes(2, bytes, record.spanAt, 16);
    if (record.parentAt >= 0) w.hexBytes(4, bytes, record.parentAt, 16);
    w.bytes(method);
    w.fixed64Nanos(7, record.startMs);
    w.fixed64Nanos(8, record.endMs);
    if (path === null) w.rawAttribute(PATH_KEY, bytes, record.path[0], record.path[1]);
    else w.stringAttribute(PATH_KEY, path, pathLength);
    w.bytes(status);
    if (client !== null) w.stringAttribute(CLIENT_KEY, client, clientLength);
    else if (clientFrom !== clientTo) w.rawAttribute(CLIENT_KEY, bytes, clientFrom, clientTo);
    if (auth !== null) w.bytes(auth);
    this.count++;
  }

  /** The request of the spans added since the last take; the encoder starts afresh. */
  take(): Uint8Array {
    const spans = this.spans;
    this.spans = new Writer(64 * 1024);
    this.count = 0;
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
}

/** AnyValue { string_value } of a value this many bytes long. */
const anyLength = (length: number) => 1 + varintSize(length) + length;
/** KeyValue { key; value = AnyValue } of the same. */
function keyValueLength(key: Uint8Array, length: number): number {
  const any = anyLength(length);
  return key.length + 1 + varintSize(any) + any;
}
/** The same KeyValue as a Span.attributes field, its tag and length included. */
function attributeSize(key: Uint8Array, length: number): number {
  const keyValue = keyValueLength(key, length);
  return 1 + varintSize(keyValue) + keyValue;
}

const TWO_32 = 0x1_0000_0000;

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
  /** A bytes field from lower-case hex digits in `from` (checked as hex when read). */
  hexBytes(field: number, from: Buffer, at: number, digits: number): void {
    this.tag(field, LEN);
    this.varint(digits / 2);
    for (let i = at; i < at + digits; i += 2)
      this.buf[this.at++] = (HEX_VALUE[from[i]!]! << 4) | HEX_VALUE[from[i + 1]!]!;
  }
  /** Epoch ms as fixed64 ns: ms × 10⁶ passes 2⁵³, so the two 32-bit halves, each exact. */
  fixed64Nanos(field: number, ms: number): void {
    this.tag(field, FIXED64);
    const hiMs = Math.floor(ms / 0x100000);
    const a = hiMs * 1e6; // ns = a·2²⁰ + b
    const b = (ms - hiMs * 0x100000) * 1e6;
    const aLow = a % 4096;
    const bLow = b % TWO_32;
    let low = aLow * 0x100000 + bLow;
    let high = (a - aLow) / 4096 + (b - bLow) / TWO_32;
    if (low >= TWO_32) {
      low -= TWO_32;
      high += 1;
    }
    this.buf.writeUInt32LE(low, this.at);
    this.buf.writeUInt32LE(high, this.at + 4);
    this.at += 8;
  }
  private attributeHead(key: Uint8Array, length: number, field: number): void {
    this.tag(field, LEN);
    this.varint(keyValueLength(key, length));
    this.bytes(key);
    this.tag(2, LEN);
    this.varint(anyLength(length));
    this.tag(1, LEN);
    this.varint(length);
  }
  /** Span.attributes (9): KeyValue { key = 1; value = 2: AnyValue { string_value = 1 } }. */
  stringAttribute(
    key: Uint8Array,
    value: string,
    length = Buffer.byteLength(value),
    field = 9,
  ): void {
    this.attributeHead(key, length, field);
    this.at += this.buf.write(value, this.at);
  }
  /** The same from bytes that are valid UTF-8 already. */
  rawAttribute(key: Uint8Array, from: Buffer, start: number, end: number): void {
    this.attributeHead(key, end - start, 9);
    if (end - start > 32) from.copy(this.buf, this.at, start, end);
    else for (let i = start; i < end; i++) this.buf[this.at + i - start] = from[i]!;
    this.at += end - start;
  }
}

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
  const resource = encoded((r) =>
    r.stringAttribute(encodeKey('service.name'), 'gateway', undefined, 1),
  );
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
/**
 * The bytes of the parts many spans share, made once per method or auth method: looked up by
 * the record's bytes, packed into a number when they are six or fewer (GET, POST, apk...), so
 * a span costs no string for them.
 */
const memo = (make: (text: string) => Buffer) => {
  const made = new Map<number | string, Buffer>();
  return (bytes: Buffer, [from, to]: [number, number]) => {
    let key: number | string;
    if (to - from <= 6) {
      key = to - from;
      for (let p = from; p < to; p++) key = key * 256 + bytes[p]!;
    } else key = bytes.toString('latin1', from, to);
    let part = made.get(key);
    if (!part) {
      part = make(bytes.toString('latin1', from, to));
      if (made.size < 1024) made.set(key, part);
    }
    return part;
  };
};
const byStatusMemo = new Map<number, Buffer>();
const byStatus = (status: number) => {
  let bytes = byStatusMemo.get(status);
  if (!bytes) {
    bytes = statusBytes(status);
    byStatusMemo.set(status, bytes); // at most 900: three digits, the first not 0
  }
  return bytes;
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
const statusBytes = (status: number) =>
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
  });
const byAuthMethod = memo((method: string) =>
  encoded((w) => w.stringAttribute(encodeKey('gateway.auth.method'), method)),
);
