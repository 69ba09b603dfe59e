import { z } from 'zod';
import { TRACE_CONTEXT } from '../common/contract.js';
import { HOST_PORT } from './patterns.js';

/**
 * W3C trace context (docs/decisions/20261202-trace-context.md). Off by default: nginx renders
 * nothing for it and passes a caller's `traceparent` on untouched, as before. On: nginx
 * continues a trusted proxy's `traceparent` (request_id.trusted_proxies), replaces anyone
 * else's, starts one when there is none, sends the application its own span as the parent,
 * and writes `trace_id`/`span_id` in the access log.
 */
export const tracingSchema = z.strictObject({
  enabled: z.boolean().default(false),
  /**
   * The share of new traces (no trusted `traceparent`) that are sampled, 0 to 1, in steps of
   * 0.0001. A continued trace keeps its caller's sampled flag (parent-based).
   */
  sample_ratio: z
    .number()
    .min(0)
    .max(1)
    .refine((r) => Math.abs(r * 10_000 - Math.round(r * 10_000)) < 1e-6, {
      message: 'must be a multiple of 0.0001',
    })
    .default(1),
  /**
   * The collector's OTLP/HTTP traces URL (e.g. http://collector:4318/v1/traces) the sidecar
   * exports its spans to; empty: ids are propagated and logged, no span is exported.
   */
  otlp_endpoint: z
    .string()
    .regex(/^(?:https?:\/\/[A-Za-z0-9.:[\]_-]+(?:\/[A-Za-z0-9._~/-]*)?)?$/, {
      message: 'must be an http:// or https:// URL such as http://collector:4318/v1/traces',
    })
    .default(''),
  /**
   * Where nginx sends its own spans' records (UDP, a datagram per batch of a worker's sampled
   * requests, the module's gateway_span_log) for the sidecar to export: the sidecar's
   * TRACING_NGINX_SPANS_LISTEN. Used only with an otlp_endpoint.
   */
  nginx_spans_to: z
    .string()
    .regex(HOST_PORT, { message: 'must be host:port, such as 127.0.0.1:4319' })
    .default('127.0.0.1:4319'),
});

export type TracingSettings = z.output<typeof tracingSchema>;

/** Variables of default.conf's trace-context maps; `log` is also read by nginx.conf's log_format. */
export const TRACE_VARIABLES = {
  /** The trusted caller's whole, well-formed `traceparent`; empty when not continued. */
  continued: '$gateway_trace_continued',
  traceId: '$gateway_trace_id',
  /** The gateway's own span: the parent the application and the sidecar see. */
  spanId: '$gateway_span_id',
  flags: '$gateway_trace_flags',
  rootFlags: '$gateway_trace_root_flags',
  traceparent: TRACE_CONTEXT.variable,
  tracestate: '$gateway_tracestate',
  log: '$gateway_trace_log',
  /** The caller's parent span id when continued, else empty. */
  parentIn: '$gateway_trace_parent_in',
  /** 1 for a sampled request: nginx then sends its span's record. */
  sampled: '$gateway_trace_sampled',
} as const;

/**
 * `split_clients` percentage for a ratio: nginx takes two decimals, so 0.0001 is "0.01%".
 * null for 0, which nginx refuses as a percentage (every new trace unsampled: `*` alone).
 */
export function samplePercent(ratio: number): string | null {
  const hundredths = Math.round(ratio * 10_000);
  return hundredths === 0 ? null : `${(hundredths / 100).toFixed(2)}%`;
}
