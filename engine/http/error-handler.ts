import type { ErrorRequestHandler } from 'express';
import { errorResult } from '../envelope.js';
import {
  BodyTooLargeError,
  EngineError,
  InternalError,
  MalformedRequestError,
  UnsupportedMediaTypeError,
} from '../errors.js';

/** The shape of errors thrown by express's body parser and router. */
interface HttpLibraryError {
  type?: string;
  status?: number;
  limit?: number;
}

/** Maps what the parser and router throw onto the engine's own errors. */
function fromLibrary(err: HttpLibraryError): EngineError | undefined {
  switch (err.type) {
    case 'entity.too.large':
      return new BodyTooLargeError(err.limit ?? 0);
    case 'entity.parse.failed':
      return new MalformedRequestError('The body is not valid JSON, or not a JSON object.');
    case 'charset.unsupported':
    case 'encoding.unsupported':
      return new UnsupportedMediaTypeError(
        'The charset or Content-Encoding of the body is not supported; send UTF-8 JSON.',
      );
  }
  // Everything else the libraries flag as the client's fault: a bad URL escape, a body whose
  // length does not match Content-Length, an aborted upload.
  if (err.status !== undefined && err.status >= 400 && err.status < 500) {
    return new MalformedRequestError('The request could not be read.');
  }
  return undefined;
}

/** The single error exit: every failure becomes an ErrorResult, unknown ones a bare 500. */
export function errorHandler(log: (line: string) => void): ErrorRequestHandler {
  return (err, _req, res, _next) => {
    const known = err instanceof EngineError ? err : fromLibrary((err ?? {}) as HttpLibraryError);
    const error = known ?? new InternalError();
    if (!known) {
      const text = err instanceof Error ? (err.stack ?? err.message) : String(err);
      log(`engine: unexpected error: ${text}`);
    }
    if (res.headersSent) {
      res.end();
      return;
    }
    res
      .status(error.status)
      .set(error.headers)
      .set('Cache-Control', 'no-store')
      .json(errorResult(error));
  };
}
