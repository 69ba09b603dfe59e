import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { MethodNotAllowedError } from '../errors/api-error.js';
import type { Logger } from '../log.js';
import { requestIdFields } from '../request-id.js';
import { startServerSpan, withSpan } from '../tracing/tracer.js';

// The stages every management request passes, in the order the application mounts them:
// noStore, requestLog, requireAdmin (sidecar/auth/require-admin.ts), then a route group's own
// handlers, closed by allowOnly.

/**
 * `Cache-Control: no-store` on every management answer, errors included, set before anything
 * else runs: a record, a list or the audit trail is as private as a new key, and an answer
 * about a change must never be replayed from a cache after the next one.
 */
export function noStore(_req: Request, res: Response, next: NextFunction): void {
  res.set('Cache-Control', 'no-store');
  next();
}

/**
 * One info line per management request once it is answered: nginx's request id, method, path
 * (never the query or a header: no credential reaches the log), status and duration.
 */
export function requestLog(log: Logger) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const started = performance.now();
    // The request's span, child of nginx's (a no-op while tracing is off); what the handlers
    // below start (database work, the audit event) are its children.
    const span = startServerSpan(`${req.method} management`, req.headers);
    res.once('finish', () => {
      if (span.isRecording()) {
        span.setAttributes({
          'http.request.method': req.method,
          'url.path': req.path,
          'http.response.status_code': res.statusCode,
        });
        const clientId = res.locals.identity?.clientId;
        if (typeof clientId === 'string') span.setAttribute('enduser.id', clientId);
        span.end();
      }
      log.info('management request', {
        ...requestIdFields(req.headers),
        method: req.method,
        path: req.path,
        status: res.statusCode,
        duration_ms: Math.round((performance.now() - started) * 10) / 10,
      });
    });
    withSpan(span, next);
  };
}

/** Terminal handler for a known path reached with a method it does not serve (route-table.ts). */
export function allowOnly(methods: string[]): RequestHandler {
  return () => {
    throw new MethodNotAllowedError(methods);
  };
}
