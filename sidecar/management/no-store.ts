import type { NextFunction, Request, Response } from 'express';

/**
 * `Cache-Control: no-store` on every management answer, errors included, set before anything
 * else runs: a record, a list or the audit trail is as private as a new key, and an answer
 * about a change must never be replayed from a cache after the next one.
 */
export function noStore(_req: Request, res: Response, next: NextFunction): void {
  res.set('Cache-Control', 'no-store');
  next();
}
