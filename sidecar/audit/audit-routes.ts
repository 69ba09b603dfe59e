import { Router } from 'express';
import type { Queryable } from '../db/queryable.js';
import { ValidationError } from '../errors/api-error.js';
import { allowOnly } from '../management/method-guard.js';
import { AUDIT_CURSOR, FAILURE_CURSOR, parseAuditQuery, parseFailureQuery } from './audit-query.js';
import { readAuditEvents, readAuthFailures } from './audit-reader.js';
import { encodePosition } from './position-cursor.js';

export const AUDIT_EVENTS_PATH = '/v1/management/audit-events';
export const AUTH_FAILURES_PATH = '/v1/management/auth-failures';

/**
 * The audit trail and the failure counts, read-only, newest first: `{items,
 * response_metadata: {next_cursor}}`. Admin only, like all of /v1/management (requireAdmin runs
 * before this router).
 */
export function auditRouter(db: Queryable): Router {
  const router = Router({ strict: false });

  router.get(AUDIT_EVENTS_PATH, async (req, res) => {
    const query = parseAuditQuery(req.query as Record<string, unknown>);
    if (!query.ok) throw new ValidationError(query.errors);
    const page = await readAuditEvents(db, query.value);
    const next =
      page.more && page.lastId !== null ? encodePosition(AUDIT_CURSOR, [page.lastId]) : null;
    res
      .set('Cache-Control', 'no-store')
      .json({ items: page.items, response_metadata: { next_cursor: next } });
  });
  router.all(AUDIT_EVENTS_PATH, allowOnly(['GET', 'HEAD']));

  router.get(AUTH_FAILURES_PATH, async (req, res) => {
    const query = parseFailureQuery(req.query as Record<string, unknown>);
    if (!query.ok) throw new ValidationError(query.errors);
    const page = await readAuthFailures(db, query.value);
    const next = page.more && page.last ? encodePosition(FAILURE_CURSOR, page.last) : null;
    res
      .set('Cache-Control', 'no-store')
      .json({ items: page.items, response_metadata: { next_cursor: next } });
  });
  router.all(AUTH_FAILURES_PATH, allowOnly(['GET', 'HEAD']));

  return router;
}
