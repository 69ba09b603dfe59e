import { Router } from 'express';
import type { ClientReads } from '../clients/store/reads.js';
import type { Clock } from '../clock.js';
import type { Queryable } from '../db/queryable.js';
import { NotFoundError, ValidationError } from '../errors/api-error.js';
import { idParam } from '../http/numeric-id.js';
import { closePaths, mount } from '../http/route-table.js';
import { USAGE_OPERATIONS as OPS } from './usage-operations.js';
import { parseUsageQuery } from './usage-query.js';
import { readUsage } from './usage-reader.js';

/** `GET /v1/management/api-clients/{id}/usage`: a client's requests over time (admin only). */
export function usageRouter(store: ClientReads, db: Queryable, clock: Clock = Date.now): Router {
  const router = Router({ strict: false });
  mount(router, OPS.usage, async (req, res) => {
    const id = idParam(req.params.id);
    const query = parseUsageQuery(req.query as Record<string, unknown>, clock());
    if (!query.ok) throw new ValidationError(query.errors);
    if (!(await store.get(id))) throw new NotFoundError('No API client has this id.');
    const { step, since, until } = query.value;
    res.json({
      id,
      step,
      since: since.toISOString(),
      until: until.toISOString(),
      points: await readUsage(db, id, query.value),
    });
  });
  closePaths(router, Object.values(OPS));
  return router;
}
