import { type Response, Router } from 'express';
import { requestContext } from '../../audit/request-context.js';
import { ConflictError, NotFoundError, ValidationError } from '../../errors/api-error.js';
import { idParam } from '../../http/numeric-id.js';
import { closePaths, mount } from '../../http/route-table.js';
import { formatApiKey, generateSecret } from '../../keys/api-key.js';
import type { Logger } from '../../log.js';
import { requestIdFields } from '../../request-id.js';
import { parseListQuery } from '../listing/query.js';
import { listResponse } from '../listing/response.js';
import { streamList } from '../listing/stream.js';
import type { RecordStreams } from '../listing/thread.js';
import { type ApiClientRow, rateLimitJson, toRecord } from '../store/api-client.js';
import { keyOf, sortField } from '../store/order.js';
import type { UpdateOutcome } from '../store/writes.js';
import { parseCreateApiClient, parseUpdateApiClient } from './client-input.js';
import { API_CLIENT_OPERATIONS as OPS } from './operations.js';
import { type RotateParts, rotateHandler } from './rotate.js';

const NAME_TAKEN = 'An API client with this name already exists.';
const SUBJECT_TAKEN = 'An API client with this api_client_id already exists.';

/** What the API client routes work with (the management application hands them over). */
export interface ApiClientRouteParts extends RotateParts {
  log: Logger;
  /** Where whole listings are read (the listing thread); default: `store`, on this thread. */
  listings?: RecordStreams;
}

/**
 * POST, GET, PUT and DELETE of API clients and the key rotation; the admin check
 * (management/app.ts) runs before. Each change commits with its audit event; a refused one
 * (404, 409) is audited as a failure.
 */
export function apiClientsRouter(parts: ApiClientRouteParts): Router {
  const { store, invalidator, log, changes, clock = Date.now, listings = store } = parts;
  const router = Router({ strict: false });
  mount(router, OPS.create, async (req, res) => {
    const input = parseCreateApiClient(req.body, clock());
    if (!input.ok) throw new ValidationError(input.errors);
    const { name, isAdmin, generateApiKey, apiClientId, expiresAt, rateLimit, permissions } =
      input.value;
    const key = generateApiKey ? generateSecret() : null;
    const context = requestContext(req, res);
    const created = await changes.run(
      (db) =>
        store.create(
          { name, isAdmin, apiClientId, expiresAt, rateLimit, permissions },
          key?.hash ?? null,
          db,
        ),
      (outcome) => ({
        ...context,
        action: 'api_client.create',
        outcome: outcome.ok ? 'success' : 'failure',
        targetId: outcome.ok ? outcome.row.id : null,
        details: outcome.ok
          ? describe(outcome.row)
          : { status: 409, conflict: outcome.conflict, name },
      }),
    );
    if (!created.ok) {
      throw created.conflict === 'name'
        ? new ConflictError('name', NAME_TAKEN)
        : new ConflictError('api_client_id', SUBJECT_TAKEN);
    }
    const id = created.row.id;
    // nginx may remember this id as unknown (someone presented it before it existed): this
    // gateway forgets that before the caller sees the key; the others hear of it through LISTEN.
    await invalidator.created([id]);
    // DCT's SDKs read the id as api_client_entity_id; the seed's api_key_id stays beside it.
    const ids = { api_key_id: id, api_client_entity_id: id };
    res.status(201).json(key ? { ...ids, token: formatApiKey(id, key.secret) } : ids);
  });

  mount(router, OPS.list, async (req, res) => {
    const query = parseListQuery(req.query as Record<string, unknown>);
    if (!query.ok) throw new ValidationError(query.errors);
    const { sort, limit, cursor, name } = query.value;
    if (limit === null) {
      // HEAD of everything: the headers a GET would have, without walking the table for a
      // body nobody receives.
      if (req.method === 'HEAD') {
        res.status(200).type('application/json; charset=utf-8').end();
        return;
      }
      await streamList(
        res,
        store,
        listings,
        sort,
        cursor,
        log.child(requestIdFields(req.headers)),
        name,
      );
      return;
    }
    const page = await store.list({
      sort,
      limit,
      from: cursor ? { direction: cursor.direction, key: cursor.key } : null,
      namePrefix: name,
    });
    const field = sortField(sort);
    res.json(listResponse(page, sort, cursor, (row) => keyOf(row, field)));
  });

  mount(router, OPS.get, async (req, res) => {
    const row = await store.get(idParam(req.params.id));
    if (!row) throw new NotFoundError('No API client has this id.');
    res.json(toRecord(row, clock()));
  });

  mount(router, OPS.update, async (req, res) => {
    const id = idParam(req.params.id);
    const input = parseUpdateApiClient(req.body, clock());
    if (!input.ok) throw new ValidationError(input.errors);
    const context = requestContext(req, res);
    const outcome = await changes.run(
      (db) => store.update(id, input.value, db),
      (done) => ({
        ...context,
        action: 'api_client.update',
        outcome: done.ok ? 'success' : 'failure',
        targetId: id,
        details: done.ok
          ? { changed: Object.keys(req.body as object).sort(), ...describe(done.row) }
          : { status: UPDATE_REFUSAL_STATUS[done.conflict], conflict: done.conflict },
      }),
    );
    // Like a delete: this gateway's nginx forgets what it decided about the client before the
    // caller sees the answer; the others hear of it through LISTEN.
    if (outcome.ok) await invalidator.clients([outcome.row.id]);
    sendUpdated(res, outcome, clock());
  });

  mount(router, OPS.delete, async (req, res) => {
    const id = idParam(req.params.id);
    const context = requestContext(req, res);
    const deleted = await changes.run(
      async (db) => {
        const row = await store.delete(id, db);
        return row ? { ok: true as const, row } : { ok: false as const };
      },
      (done) => ({
        ...context,
        action: 'api_client.delete',
        outcome: done.ok ? 'success' : 'failure',
        targetId: id,
        // The row is gone when the event is written: its name comes from what was deleted.
        targetName: done.ok ? done.row.name : undefined,
        details: done.ok ? describe(done.row) : { status: 404 },
      }),
    );
    if (!deleted.ok) throw new NotFoundError('No API client has this id.');
    // Before answering: once the caller sees the answer, this gateway refuses the key. Other
    // sidecars hear of it through LISTEN (the trigger also notifies this one; harmless).
    await invalidator.clients([deleted.row.id]);
    res.json(toRecord(deleted.row, clock()));
  });

  mount(router, OPS.rotate, rotateHandler(parts));
  closePaths(router, Object.values(OPS));

  return router;
}

/** The status each refused update is answered with (sendUpdated), for its audit event. */
const UPDATE_REFUSAL_STATUS = {
  missing: 404,
  name: 409,
  api_client_id: 409,
  no_credential: 400,
} as const;

/** What an audit event says about a client: its public fields, never a key or a hash. */
function describe(row: ApiClientRow): Record<string, unknown> {
  return {
    name: row.name,
    is_admin: row.isAdmin,
    api_client_id: row.apiClientId,
    has_api_key: row.keyHash !== null,
    expires_at: row.expiresAt?.toISOString() ?? null,
    rate_limit: rateLimitJson(row.rateLimit),
    permissions: row.permissions,
  };
}

function sendUpdated(res: Response, outcome: UpdateOutcome, now: number): void {
  if (outcome.ok) {
    res.json(toRecord(outcome.row, now));
    return;
  }
  switch (outcome.conflict) {
    case 'missing':
      throw new NotFoundError('No API client has this id.');
    case 'name':
      throw new ConflictError('name', NAME_TAKEN);
    case 'api_client_id':
      throw new ConflictError('api_client_id', SUBJECT_TAKEN);
    case 'no_credential':
      throw new ValidationError([
        {
          code: 'MISSING_FIELD',
          field: 'api_client_id',
          message: 'api_client_id is required for a client without an API key.',
        },
      ]);
  }
}
