import type { IncomingHttpHeaders } from 'node:http';
import {
  type Context,
  context,
  INVALID_SPAN_CONTEXT,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  trace,
} from '@opentelemetry/api';
import { traceParentOf } from '../../common/trace-context.js';

/**
 * The sidecar's spans (docs/decisions/20261202-trace-context.md). Until startTracing runs (an
 * OTLP endpoint set) the API has no provider: every span below is a non-recording no-op and
 * the SDK is never loaded.
 */
const tracer = () => trace.getTracer('gateway-sidecar');

/**
 * Whether startTracing has set a provider. Until then every /auth question would still parse
 * nginx's traceparent, make a no-op span and enter a context for it: 6 % of the sidecar's busy
 * time with nginx's cache off (docs/decisions/20261202-cache-off-path.md). Off: none of that.
 */
let recording = false;
const NOT_RECORDING: Span = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

/** Called by startTracing once its provider is the global one. */
export function tracingStarted(): void {
  recording = true;
}

/** nginx's span as a remote parent; the root context when nginx sent none. */
export function parentContext(headers: IncomingHttpHeaders): Context {
  const parent = traceParentOf(headers);
  if (!parent) return ROOT_CONTEXT;
  return trace.setSpanContext(ROOT_CONTEXT, {
    traceId: parent.traceId,
    spanId: parent.spanId,
    traceFlags: parent.sampled ? TraceFlags.SAMPLED : TraceFlags.NONE,
    isRemote: true,
  });
}

/** A server span for a request nginx passed on, child of nginx's span. Ended by the caller. */
export function startServerSpan(name: string, headers: IncomingHttpHeaders): Span {
  if (!recording) return NOT_RECORDING;
  return tracer().startSpan(name, { kind: SpanKind.SERVER }, parentContext(headers));
}

/** `body` inside `span`'s context, so the spans it starts (and awaits) are its children. */
export function withSpan<T>(span: Span, body: () => T): T {
  if (!recording) return body();
  return context.with(trace.setSpan(context.active(), span), body);
}

/** `body`'s result in `span`, which ends with it: an error it throws marks the span and goes on. */
async function endedAfter<T>(span: Span, body: () => Promise<T>): Promise<T> {
  try {
    return await body();
  } catch (err) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).name });
    throw err;
  } finally {
    span.end();
  }
}

/**
 * `body` as an internal child span of whatever span is active (none: nothing recorded): its
 * error, if it throws, marks the span and is rethrown. Attributes never carry a credential.
 */
export async function inChildSpan<T>(
  name: string,
  attributes: Record<string, string | number | boolean>,
  body: () => Promise<T>,
): Promise<T> {
  if (!trace.getSpan(context.active())?.isRecording()) return await body();
  return await tracer().startActiveSpan(name, { attributes }, (span) => endedAfter(span, body));
}

/**
 * The sidecar's own work that no request started, each span the root of a trace of its own:
 * the only roots the sampler keeps (start-tracing.ts). Rare: a load per start or reconnection,
 * a change per notified client change.
 */
export const BACKGROUND_SPANS = {
  keyTableLoad: 'key table load',
  keyTableCatchUp: 'key table catch-up',
  keyTableChange: 'key table change',
} as const;

const BACKGROUND_NAMES: ReadonlySet<string> = new Set(Object.values(BACKGROUND_SPANS));

/** Whether a span without a parent is one of BACKGROUND_SPANS (the sampler's root rule). */
export function isBackgroundSpan(name: string): boolean {
  return BACKGROUND_NAMES.has(name);
}

/** `body` as the root span `name` (one of BACKGROUND_SPANS), whatever span is active. */
export async function inBackgroundSpan<T>(
  name: (typeof BACKGROUND_SPANS)[keyof typeof BACKGROUND_SPANS],
  body: () => Promise<T>,
): Promise<T> {
  return await tracer().startActiveSpan(name, { root: true }, (span) => endedAfter(span, body));
}
