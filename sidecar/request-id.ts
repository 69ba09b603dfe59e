import type { IncomingHttpHeaders } from 'node:http';
import { REQUEST_ID, REQUEST_ID_SHAPE } from '../common/contract.js';
import { traceFields } from '../common/trace-context.js';

const HEADER = REQUEST_ID.header.toLowerCase();

/**
 * The gateway's request id from the sidecar's request headers, or undefined. nginx's own id (32
 * hex digits) or a trusted proxy's, which nginx only keeps in REQUEST_ID_SHAPE; anything else (a
 * caller reaching the sidecar some other way) is not logged as an id.
 */
export function requestIdOf(headers: IncomingHttpHeaders): string | undefined {
  const value = headers[HEADER];
  return typeof value === 'string' && REQUEST_ID_SHAPE.test(value) ? value : undefined;
}

/**
 * `{ request_id }` for a log line, or nothing when the request carries no id; with tracing on,
 * also the `trace_id` and `span_id` (the gateway's span) nginx's access log writes.
 */
export function requestIdFields(headers: IncomingHttpHeaders): Record<string, string> {
  const id = requestIdOf(headers);
  return { ...(id === undefined ? {} : { request_id: id }), ...traceFields(headers) };
}
