import { isUtf8 } from 'node:buffer';
import express, { type NextFunction, type Request, type Response } from 'express';
import {
  InvalidContentEncodingError,
  InvalidJsonError,
  PayloadTooLargeError,
  UnsupportedMediaTypeError,
  ValidationError,
} from '../errors/api-error.js';

export const BODY_LIMIT_BYTES = 64 * 1024;

// JSON is UTF-8 (RFC 8259 §8.1). body-parser would decode any "utf-*" charset and replace
// invalid bytes with U+FFFD, so a name could be stored other than it was sent: refuse both.
const parseJson = express.json({
  limit: BODY_LIMIT_BYTES,
  strict: false,
  type: () => true,
  verify: (_req, _res, raw) => {
    if (!isUtf8(raw)) throw new Error('the body is not UTF-8');
  },
});

const CHARSET = /;\s*charset\s*=\s*"?([^";\s]*)/i;

/** Reads a JSON body of at most 64 KiB; every failure is a client error with the JSON shape. */
export function jsonBody(req: Request, res: Response, next: NextFunction): void {
  const type = req.headers['content-type'];
  if (!type || !/^application\/json\s*(;|$)/i.test(type)) throw new UnsupportedMediaTypeError();
  const charset = CHARSET.exec(type)?.[1];
  if (charset !== undefined && charset.toLowerCase() !== 'utf-8') {
    throw new UnsupportedMediaTypeError();
  }
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
  const { type, status } = err as { type?: unknown; status?: unknown };
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
    case undefined:
      // Every error of the body reader itself has a type; an untyped 400 is the zlib or brotli
      // stream failing on a broken gzip/deflate/br body, the caller's mistake, not a 500.
      return status === 400 ? new InvalidContentEncodingError() : err;
    default:
      return err;
  }
}
