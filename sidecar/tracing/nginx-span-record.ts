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

const FIELDS = NGINX_SPAN_RECORD.fields;
const TRACE_ID = /^(?!0{32})[0-9a-f]{32}$/;
const SPAN_ID = /^(?!0{16})[0-9a-f]{16}$/;
const SECONDS = /^\d{1,12}\.\d{3}$/;
const METHOD = /^[A-Z]{1,16}$/;
const LENGTH = /^[1-9]\d{0,5}$/;
const COLON = 0x3a;

/** A datagram's records, and how many of its records could not be read. */
export interface NginxSpanBatch {
  records: NginxSpanRecord[];
  unreadable: number;
}

/**
 * One datagram from nginx's `gateway_span_log` (common/contract/request.ts): records framed as
 * `<length>:<record>`, back to back. A record that does not read is counted and skipped; a frame
 * that does not read (not nginx's, or cut) ends the datagram, counted as one: nothing is half-read.
 */
export function parseNginxSpanBatch(datagram: Buffer): NginxSpanBatch {
  const records: NginxSpanRecord[] = [];
  let unreadable = 0;
  let at = 0;
  while (at < datagram.length) {
    const colon = datagram.indexOf(COLON, at);
    const length = colon < 0 ? '' : datagram.toString('latin1', at, colon);
    const end = colon + 1 + Number(length);
    if (!LENGTH.test(length) || end > datagram.length) {
      unreadable++;
      break;
    }
    const record = parseNginxSpanRecord(datagram.toString('utf8', colon + 1, end));
    if (record) records.push(record);
    else unreadable++;
    at = end;
  }
  return { records, unreadable };
}

/** One record: nginx's values in the contract's order, one space apart, the path last. */
export function parseNginxSpanRecord(text: string): NginxSpanRecord | null {
  const values: Record<string, string> = {};
  let at = 0;
  for (const field of FIELDS.slice(0, -1)) {
    const space = text.indexOf(' ', at);
    if (space < 0) return null;
    values[field] = text.slice(at, space);
    at = space + 1;
  }
  values[FIELDS[FIELDS.length - 1]!] = text.slice(at);
  const { traceId, spanId, parentId, end, duration, method } = values as Record<
    (typeof FIELDS)[number],
    string
  >;
  const status = Number(values.status);
  if (!TRACE_ID.test(traceId) || !SPAN_ID.test(spanId)) return null;
  if (parentId !== '' && !SPAN_ID.test(parentId)) return null;
  if (!SECONDS.test(end) || !SECONDS.test(duration) || !METHOD.test(method)) return null;
  if (!/^[1-9]\d{2}$/.test(values.status!)) return null;
  const endMs = Math.round(Number(end) * 1000);
  return {
    traceId,
    spanId,
    parentId: parentId === '' ? undefined : parentId,
    startMs: endMs - Math.round(Number(duration) * 1000),
    endMs,
    method,
    path: values.path!.slice(0, 2048),
    status,
    clientId: decoded(values.clientId!),
    authMethod: values.authMethod || undefined,
  };
}

function decoded(value: string): string | undefined {
  if (value === '') return undefined;
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}
