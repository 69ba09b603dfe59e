import type { IncomingHttpHeaders } from 'node:http';
import { TRACE_CONTEXT } from './contract.js';

const HEADER = TRACE_CONTEXT.header;

// What nginx sends (docs/decisions/20261202-trace-context.md): version 00, lower-case hex, ids
// not all zeros. Anything else is not a trace this sidecar continues or logs.
const TRACEPARENT = /^00-(?!0{32})([0-9a-f]{32})-(?!0{16})([0-9a-f]{16})-([0-9a-f]{2})$/;

/** The trace and the gateway's span a request names, and whether the trace is sampled. */
export interface TraceParent {
  traceId: string;
  spanId: string;
  sampled: boolean;
}

/** The `traceparent` nginx sent (its own span as the parent), or undefined. */
export function traceParentOf(headers: IncomingHttpHeaders): TraceParent | undefined {
  const value = headers[HEADER];
  const match = typeof value === 'string' ? TRACEPARENT.exec(value) : null;
  if (!match) return undefined;
  const [, traceId, spanId, flags] = match as unknown as [string, string, string, string];
  return { traceId, spanId, sampled: (Number.parseInt(flags, 16) & 1) === 1 };
}

/**
 * `{ trace_id, span_id }` for a log line: the trace and the gateway's span (the span_id nginx's
 * access log writes), or nothing when nginx sent no traceparent (tracing off).
 */
export function traceFields(headers: IncomingHttpHeaders): Record<string, string> {
  const parent = traceParentOf(headers);
  return parent === undefined ? {} : { trace_id: parent.traceId, span_id: parent.spanId };
}
