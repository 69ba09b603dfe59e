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

const K = NGINX_SPAN_RECORD.keys;
const TRACE_ID = /^(?!0{32})[0-9a-f]{32}$/;
const SPAN_ID = /^(?!0{16})[0-9a-f]{16}$/;
const SECONDS = /^\d{1,12}\.\d{3}$/;
const METHOD = /^[A-Z]{1,16}$/;
const MARK = `${NGINX_SPAN_RECORD.tag}: `;

/**
 * One syslog datagram from nginx (`<pri>timestamp tag: {json}`) as a record, or null for anything
 * else: a datagram from something that is not nginx, or cut, is dropped, never half-read.
 */
export function parseNginxSpanRecord(datagram: string): NginxSpanRecord | null {
  const at = datagram.indexOf(MARK);
  if (at < 0) return null;
  let fields: Record<string, unknown>;
  try {
    fields = JSON.parse(datagram.slice(at + MARK.length));
  } catch {
    return null;
  }
  if (typeof fields !== 'object' || fields === null) return null;
  const text = (key: string) => (typeof fields[key] === 'string' ? (fields[key] as string) : '');
  const [traceId, spanId, parentId] = [text(K.traceId), text(K.spanId), text(K.parentId)];
  const [end, duration, method] = [text(K.end), text(K.duration), text(K.method)];
  const status = Number(text(K.status));
  if (!TRACE_ID.test(traceId) || !SPAN_ID.test(spanId)) return null;
  if (parentId !== '' && !SPAN_ID.test(parentId)) return null;
  if (!SECONDS.test(end) || !SECONDS.test(duration) || !METHOD.test(method)) return null;
  if (!Number.isInteger(status) || status < 100 || status > 999) return null;
  const endMs = Math.round(Number(end) * 1000);
  return {
    traceId,
    spanId,
    parentId: parentId === '' ? undefined : parentId,
    startMs: endMs - Math.round(Number(duration) * 1000),
    endMs,
    method,
    path: text(K.path).slice(0, 2048),
    status,
    clientId: decoded(text(K.clientId)),
    authMethod: text(K.authMethod) || undefined,
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
