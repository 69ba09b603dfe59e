import type { IncomingHttpHeaders } from 'node:http';
import { REQUEST_ID } from '../common/contract.js';

const HEADER = REQUEST_ID.header.toLowerCase();
// nginx's $request_id is 32 hex digits; anything else (a caller reaching the sidecar some other
// way) is not logged as an id, so it cannot pose as one.
const SHAPE = /^[0-9a-f]{32}$/;

/** nginx's request id from the sidecar's request headers, or undefined. */
export function requestIdOf(headers: IncomingHttpHeaders): string | undefined {
  const value = headers[HEADER];
  return typeof value === 'string' && SHAPE.test(value) ? value : undefined;
}

/** `{ request_id }` for a log line, or nothing when the request carries no id. */
export function requestIdFields(headers: IncomingHttpHeaders): Record<string, string> {
  const id = requestIdOf(headers);
  return id === undefined ? {} : { request_id: id };
}
