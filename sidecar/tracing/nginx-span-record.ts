import { isUtf8 } from 'node:buffer';
import { NGINX_SPAN_RECORD } from '../../common/contract.js';

/** nginx's record of one sampled request's span (common/contract/request.ts), validated. */
export interface NginxSpanRecord {
  traceId: string;
  spanId: string;
  /** The trusted caller's span; undefined when nginx started the trace. */
  parentId: string | undefined;
  /** Epoch milliseconds. */
  startMs: number;
  endMs: number;
  method: string;
  path: string;
  status: number;
  /** Decoded; undefined when nobody was authenticated. */
  clientId: string | undefined;
  authMethod: string | undefined;
}

/**
 * One record as it was read, without copying it out of its datagram: offsets into `bytes`, and
 * the numbers. Reused from record to record: valid only inside readNginxSpanBatch's callback.
 * At sampling 1.0 every request is a record, so the exporter encodes straight from these bytes
 * (nginx-span-otlp.ts) rather than from an object and strings per record.
 */
export interface NginxSpanView {
  bytes: Buffer;
  /** Offsets of the 32 and 16 hex digits; parentAt -1 when nginx started the trace. */
  traceAt: number;
  spanAt: number;
  parentAt: number;
  startMs: number;
  endMs: number;
  status: number;
  /** [start, end) of the method, the auth method, the client id and the path. */
  method: [number, number];
  authMethod: [number, number];
  clientId: [number, number];
  path: [number, number];
  /** The client id as its bytes say (plain ASCII, no `%`), or else decoded. */
  clientIdPlain: boolean;
  /** The path as its bytes are (valid UTF-8, at most MAX_PATH bytes), or else cut as text. */
  pathPlain: boolean;
}

/** A path longer than this is cut (in characters): a span attribute, not the request. */
export const MAX_PATH = 2048;
const MAX_NAME = 64;
const FIELDS = NGINX_SPAN_RECORD.fields.length;
const SPACE = 0x20;
const COLON = 0x3a;

const view: NginxSpanView = {
  bytes: Buffer.alloc(0),
  traceAt: 0,
  spanAt: 0,
  parentAt: -1,
  startMs: 0,
  endMs: 0,
  status: 0,
  method: [0, 0],
  authMethod: [0, 0],
  clientId: [0, 0],
  path: [0, 0],
  clientIdPlain: true,
  pathPlain: true,
};
// Each field's [start, end), in the contract's order (the path's end is the record's).
const starts = new Int32Array(FIELDS);
const ends = new Int32Array(FIELDS);

/**
 * One datagram from nginx's `gateway_span_log` (common/contract/request.ts): records framed as
 * `<length>:<record>`, back to back, each handed to `each` as a view while it is read. A record
 * that does not read is counted and skipped; a frame that does not read (not nginx's, or cut)
 * ends the datagram, counted as one: nothing is half-read. Returns the count not read.
 */
export function readNginxSpanBatch(
  datagram: Buffer,
  each: (record: NginxSpanView) => void,
): number {
  let unreadable = 0;
  let at = 0;
  while (at < datagram.length) {
    // The length: 1 to 6 digits, no leading zero, then a colon.
    let length = 0;
    let p = at;
    while (p < datagram.length && p - at < 7 && isDigit(datagram[p]!)) {
      length = length * 10 + datagram[p]! - 0x30;
      p++;
    }
    const digits = p - at;
    const end = p + 1 + length;
    if (
      digits === 0 ||
      digits > 6 ||
      datagram[at] === 0x30 ||
      datagram[p] !== COLON ||
      end > datagram.length
    ) {
      unreadable++;
      break;
    }
    if (readRecord(datagram, p + 1, end)) each(view);
    else unreadable++;
    at = end;
  }
  return unreadable;
}

/** The record in bytes[from, to) into `view`, or false when it does not read. */
function readRecord(bytes: Buffer, from: number, to: number): boolean {
  let at = from;
  for (let i = 0; i < FIELDS - 1; i++) {
    let p = at;
    while (p < to && bytes[p] !== SPACE) p++;
    if (p === to) return false;
    starts[i] = at;
    ends[i] = p;
    at = p + 1;
  }
  starts[FIELDS - 1] = at;
  ends[FIELDS - 1] = to;
  // traceId spanId parentId end duration method status authMethod clientId path
  if (!isHexId(bytes, starts[0]!, ends[0]!, 32) || !isHexId(bytes, starts[1]!, ends[1]!, 16))
    return false;
  const parentLength = ends[2]! - starts[2]!;
  if (parentLength !== 0 && !isHexId(bytes, starts[2]!, ends[2]!, 16)) return false;
  const endMs = millis(bytes, starts[3]!, ends[3]!);
  const durationMs = millis(bytes, starts[4]!, ends[4]!);
  if (endMs < 0 || durationMs < 0) return false;
  if (!isIn(bytes, starts[5]!, ends[5]!, 1, 16, 0x41, 0x5a)) return false;
  const status = statusOf(bytes, starts[6]!, ends[6]!);
  if (status < 0) return false;
  if (!isIn(bytes, starts[7]!, ends[7]!, 0, MAX_NAME, 0x21, 0x7e)) return false;
  view.bytes = bytes;
  view.traceAt = starts[0]!;
  view.spanAt = starts[1]!;
  view.parentAt = parentLength === 0 ? -1 : starts[2]!;
  view.endMs = endMs;
  view.startMs = endMs - durationMs;
  view.status = status;
  view.method[0] = starts[5]!;
  view.method[1] = ends[5]!;
  view.authMethod[0] = starts[7]!;
  view.authMethod[1] = ends[7]!;
  view.clientId[0] = starts[8]!;
  view.clientId[1] = ends[8]!;
  view.path[0] = starts[9]!;
  view.path[1] = to;
  view.clientIdPlain = isPlainId(bytes, starts[8]!, ends[8]!);
  view.pathPlain = isPlainPath(bytes, starts[9]!, to);
  return true;
}

const isDigit = (b: number) => b >= 0x30 && b <= 0x39;

/** A byte's value as a lower-case hex digit, -1 for any other byte (the encoder decodes with it). */
export const HEX_VALUE = new Int8Array(256).fill(-1);
for (let b = 0; b < 16; b++) HEX_VALUE['0123456789abcdef'.charCodeAt(b)] = b;

/** Lower-case hex of exactly `length` digits, not all zero (W3C's invalid id). */
function isHexId(bytes: Buffer, from: number, to: number, length: number): boolean {
  if (to - from !== length) return false;
  let nonZero = false;
  for (let p = from; p < to; p++) {
    const b = bytes[p]!;
    if (HEX_VALUE[b]! < 0) return false;
    if (b !== 0x30) nonZero = true;
  }
  return nonZero;
}

/** nginx's seconds with milliseconds (`$msec`, `$request_time`: 1 to 12 digits, `.`, 3) in ms; -1 if not. */
function millis(bytes: Buffer, from: number, to: number): number {
  const point = to - 4;
  if (point - from < 1 || point - from > 12 || bytes[point] !== 0x2e) return -1;
  let ms = 0;
  for (let p = from; p < to; p++) {
    if (p === point) continue;
    const b = bytes[p]!;
    if (!isDigit(b)) return -1;
    ms = ms * 10 + b - 0x30;
  }
  return ms;
}

/** Three digits, the first not 0; -1 if not. */
function statusOf(bytes: Buffer, from: number, to: number): number {
  if (to - from !== 3) return -1;
  const [a, b, c] = [bytes[from]!, bytes[from + 1]!, bytes[from + 2]!];
  if (a < 0x31 || a > 0x39 || !isDigit(b) || !isDigit(c)) return -1;
  return (a - 0x30) * 100 + (b - 0x30) * 10 + c - 0x30;
}

/** min to max bytes, each within [low, high]. */
function isIn(
  bytes: Buffer,
  from: number,
  to: number,
  min: number,
  max: number,
  low: number,
  high: number,
): boolean {
  const length = to - from;
  if (length < min || length > max) return false;
  for (let p = from; p < to; p++) if (bytes[p]! < low || bytes[p]! > high) return false;
  return true;
}

/** ASCII without `%`: what it says is what it is. */
function isPlainId(bytes: Buffer, from: number, to: number): boolean {
  for (let p = from; p < to; p++) if (bytes[p]! >= 0x80 || bytes[p] === 0x25) return false;
  return true;
}

function isPlainPath(bytes: Buffer, from: number, to: number): boolean {
  if (to - from > MAX_PATH) return false;
  for (let p = from; p < to; p++) if (bytes[p]! >= 0x80) return isUtf8(bytes.subarray(from, to));
  return true;
}

/** A view's method or auth method (ASCII). */
export const asciiOf = (record: NginxSpanView, [from, to]: [number, number]) =>
  record.bytes.toString('latin1', from, to);

/** The view's path as text: its bytes as UTF-8, cut to MAX_PATH characters. */
export const pathOf = (record: NginxSpanView) =>
  record.bytes.toString('utf8', record.path[0], record.path[1]).slice(0, MAX_PATH);

/** The view's client id, percent-decoded as nginx encoded it; undefined when there is none. */
export function clientIdOf(record: NginxSpanView): string | undefined {
  const [from, to] = record.clientId;
  if (from === to) return undefined;
  const text = record.bytes.toString('utf8', from, to);
  if (record.clientIdPlain) return text;
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** The view as a record of its own (tests and logs; the exporter reads the view). */
export function recordOf(record: NginxSpanView): NginxSpanRecord {
  const { bytes } = record;
  return {
    traceId: bytes.toString('latin1', record.traceAt, record.traceAt + 32),
    spanId: bytes.toString('latin1', record.spanAt, record.spanAt + 16),
    parentId:
      record.parentAt < 0
        ? undefined
        : bytes.toString('latin1', record.parentAt, record.parentAt + 16),
    startMs: record.startMs,
    endMs: record.endMs,
    method: asciiOf(record, record.method),
    path: pathOf(record),
    status: record.status,
    clientId: clientIdOf(record),
    authMethod: asciiOf(record, record.authMethod) || undefined,
  };
}

/** A datagram's records, and how many of its records could not be read. */
export interface NginxSpanBatch {
  records: NginxSpanRecord[];
  unreadable: number;
}

/** A datagram's records as records of their own (readNginxSpanBatch, then recordOf). */
export function parseNginxSpanBatch(datagram: Buffer): NginxSpanBatch {
  const records: NginxSpanRecord[] = [];
  const unreadable = readNginxSpanBatch(datagram, (r) => records.push(recordOf(r)));
  return { records, unreadable };
}
