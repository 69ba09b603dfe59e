import type { NextFunction, Request, Response } from 'express';
import type { Logger } from '../log.js';
import { requestIdFields } from '../request-id.js';

/**
 * One info line per management request once it is answered: nginx's request id, method, path
 * (never the query or a header: no credential reaches the log), status and duration.
 */
export function requestLog(log: Logger) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const started = performance.now();
    res.once('finish', () => {
      log.info('management request', {
        ...requestIdFields(req.headers),
        method: req.method,
        path: req.path,
        status: res.statusCode,
        duration_ms: Math.round((performance.now() - started) * 10) / 10,
      });
    });
    next();
  };
}
