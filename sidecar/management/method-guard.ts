import type { RequestHandler } from 'express';
import { MethodNotAllowedError } from '../errors/api-error.js';

/** Terminal handler for a known path reached with a method it does not serve. */
export function allowOnly(methods: string[]): RequestHandler {
  return () => {
    throw new MethodNotAllowedError(methods);
  };
}
