import type { NextFunction, Request, Response } from 'express';
import { isConnectionError } from '../db/pool.js';
import type { Logger } from '../log.js';
import { requestIdFields } from '../request-id.js';
import {
  ApiError,
  type ErrorBody,
  INTERNAL_ERROR_BODY,
  ServiceUnavailableError,
} from './api-error.js';

const BAD_REQUEST_BODY: ErrorBody = {
  errors: [
    {
      code: 'BAD_REQUEST',
      message: 'The request could not be read (for example a bad percent-escape in the path).',
    },
  ],
};

/**
 * Express flags what the caller got wrong with a 4xx `status` (the router's "Failed to decode
 * param" for `/api-clients/%zz`): the caller's fault, so a 400, never a 500.
 */
function isClientFault(err: unknown): boolean {
  const status = (err as { status?: unknown } | null)?.status;
  return typeof status === 'number' && status >= 400 && status < 500;
}

/** Maps every error to the one JSON shape; unknown errors become a bare 500 without internals. */
export function errorMiddleware(log: Logger) {
  return (err: unknown, req: Request, res: Response, _next: NextFunction): void => {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    const where = { ...requestIdFields(req.headers), method: req.method, path: req.path };
    const clientFault = isClientFault(err);
    // The database went away during the route's own work (after the admin check passed):
    // retryable, so the documented 503, not a 500. Only errors nobody answered deliberately.
    const error =
      !(err instanceof ApiError) && !clientFault && isConnectionError(err)
        ? new ServiceUnavailableError(err)
        : err;
    if (error instanceof ServiceUnavailableError) {
      // The caller sees a fixed message; the operator needs the reason, once, here.
      log.error('a management request failed on an infrastructure fault', {
        ...where,
        error: messageOf(error.fault),
      });
    }
    if (error instanceof ApiError) {
      res.set(error.headers).status(error.status).json(error.body());
      return;
    }
    if (clientFault) {
      res.status(400).json(BAD_REQUEST_BODY);
      return;
    }
    log.error('unexpected error in a management route', { ...where, error: messageOf(err) });
    res.status(500).json(INTERNAL_ERROR_BODY);
  };
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
