import type { Request } from 'express';
import { InvalidRequestError, UnsupportedMediaTypeError } from '../errors.js';

function hasBody(req: Request): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

function isEmptyObject(value: unknown): boolean {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    Object.keys(value).length === 0
  );
}

/**
 * The JSON body of a call, or undefined when there is none. Calls that take no input (every GET,
 * DELETE and delete alias) refuse a body rather than ignore it, so a client that put its input
 * in the wrong place learns so; an empty `{}` is tolerated because many clients send one.
 */
export function bodyOf(req: Request, takesBody: boolean): unknown {
  if (!hasBody(req)) return undefined;
  if (!takesBody) {
    if (req.body === undefined || !isEmptyObject(req.body)) {
      throw new InvalidRequestError(
        `${req.method} ${req.path} takes no body; send input as query parameters.`,
        [{ type: 'Diagnosis', field: '(body)', message: 'not allowed on this call' }],
      );
    }
    return undefined;
  }
  if (!req.is(['application/json', 'application/*+json'])) {
    throw new UnsupportedMediaTypeError(
      `The body must be JSON (Content-Type: application/json), not ${req.headers['content-type'] ?? 'untyped'}.`,
    );
  }
  return req.body;
}
