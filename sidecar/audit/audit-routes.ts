import { Router } from 'express';
import type { Queryable } from '../db/queryable.js';
import { ValidationError } from '../errors/api-error.js';
import { closePaths, mount } from '../http/route-table.js';
import { AUDIT_OPERATIONS as OPS } from './audit-operations.js';
import { AUDIT_CURSOR, FAILURE_CURSOR, parseAuditQuery, parseFailureQuery } from './audit-query.js';
import { readAuditEvents, readAuthFailures } from './audit-reader.js';
import { encodePosition } from './position-cursor.js';

/**
 * The audit trail and the failure counts, read-only, newest first: `{items,
 * response_metadata: {next_cursor}}`. Admin only, like all of /v1/management (requireAdmin runs
 * before this router).
 */
export function auditRouter(db: Queryable): Router {
  const router = Router({ strict: false });

  mount(router, OPS.events, async (req, res) => {
    const query = parseAuditQuery(req.query as Record<string, unknown>);
    if (!query.ok) throw new ValidationError(query.errors);
    const page = await readAuditEvents(db, query.value);
    const next =
      page.more && page.lastId !== null ? encodePosition(AUDIT_CURSOR, [page.lastId]) : null;
    res.json({ items: page.items, response_metadata: { next_cursor: next } });
  });

  mount(router, OPS.failures, async (req, res) => {
    const query = parseFailureQuery(req.query as Record<string, unknown>);
    if (!query.ok) throw new ValidationError(query.errors);
    const page = await readAuthFailures(db, query.value);
    const next = page.more && page.last ? encodePosition(FAILURE_CURSOR, page.last) : null;
    res.json({ items: page.items, response_metadata: { next_cursor: next } });
  });

  closePaths(router, Object.values(OPS));
  return router;
}
