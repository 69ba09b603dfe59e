import express, { type NextFunction, type Request, type Response } from 'express';
import {
  InvalidJsonError,
  PayloadTooLargeError,
  UnsupportedMediaTypeError,
  ValidationError,
} from '../errors/api-error.js';

export const BODY_LIMIT_BYTES = 64 * 1024;

const parseJson = express.json({ limit: BODY_LIMIT_BYTES, strict: false, type: () => true });

/** Reads a JSON body of at most 64 KiB; every failure is a client error with the JSON shape. */
export function jsonBody(req: Request, res: Response, next: NextFunction): void {
  const type = req.headers['content-type'];
  if (!type || !/^application\/json\s*(;|$)/i.test(type)) throw new UnsupportedMediaTypeError();
  // body-parser turns an empty body into {}; say what really happened instead.
  if (
    req.headers['content-length'] === '0' ||
    (!req.headers['content-length'] && !req.headers['transfer-encoding'])
  ) {
    throw new ValidationError([{ code: 'INVALID_BODY', message: 'The request body is empty.' }]);
  }
  parseJson(req, res, (err?: unknown) => {
    if (err) return next(translate(err));
    next();
  });
}

function translate(err: unknown): unknown {
  const type = (err as { type?: unknown }).type;
  switch (type) {
    case 'entity.too.large':
      return new PayloadTooLargeError(BODY_LIMIT_BYTES);
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new UnsupportedMediaTypeError();
    case 'entity.parse.failed':
    case 'request.aborted':
    case 'request.size.invalid':
    case 'entity.verify.failed':
      return new InvalidJsonError();
    default:
      return err;
  }
}
