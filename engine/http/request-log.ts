import type { IncomingMessage, ServerResponse } from 'node:http';
import { REQUEST_ID_SHAPE } from '../../common/contract.js';
import { traceFields } from '../../common/trace-context.js';

/**
 * One JSON line per answered request: method, path (never the query: it may carry data the
 * caller did not mean for a log), status, duration, and the gateway's `X-Request-Id`, so a
 * request can be followed from the caller's answer through nginx and the sidecar to here;
 * with the gateway's tracing on, the `trace_id` and `span_id` (the gateway's span, this
 * request's parent) of the `traceparent` nginx sent.
 */
export function logRequest(
  req: IncomingMessage,
  res: ServerResponse,
  log: (line: string) => void,
): void {
  const started = performance.now();
  res.once('finish', () => {
    const id = req.headers['x-request-id'];
    log(
      JSON.stringify({
        time: new Date().toISOString(),
        level: 'info',
        message: 'engine request',
        ...(typeof id === 'string' && REQUEST_ID_SHAPE.test(id) ? { request_id: id } : {}),
        ...traceFields(req.headers),
        method: req.method,
        path: (req.url ?? '').split('?')[0],
        status: res.statusCode,
        duration_ms: Math.round((performance.now() - started) * 10) / 10,
      }),
    );
  });
}
