import type { NextFunction, Request, Response } from 'express';
import type { Logger } from '../log.js';
import { ApiError, INTERNAL_ERROR_BODY } from './api-error.js';

/** Maps every error to the one JSON shape; unknown errors become a bare 500 without internals. */
export function errorMiddleware(log: Logger) {
  return (err: unknown, req: Request, res: Response, _next: NextFunction): void => {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    res.setHeader('Cache-Control', 'no-store');
    if (err instanceof ApiError) {
      res.set(err.headers).status(err.status).json(err.body());
      return;
    }
    log.error('unexpected error in a management route', {
      method: req.method,
      path: req.path,
      error: err instanceof Error ? err.message : String(err),
    });
    res.status(500).json(INTERNAL_ERROR_BODY);
  };
}
