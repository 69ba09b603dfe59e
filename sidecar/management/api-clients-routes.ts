import { type Response, Router } from 'express';
import { toRecord } from '../clients/api-client.js';
import { keyOf, sortField } from '../clients/client-order.js';
import type { ClientStore, UpdateOutcome } from '../clients/client-store.js';
import { ConflictError, NotFoundError, ValidationError } from '../errors/api-error.js';
import { formatApiKey, generateSecret } from '../keys/api-key.js';
import type { Logger } from '../log.js';
import type { DecisionInvalidator } from '../revocation/nginx-control.js';
import { parseCreateApiClient, parseUpdateApiClient } from './api-client-input.js';
import { API_CLIENT_OPERATIONS as OPS } from './api-clients-operations.js';
import { parseListQuery } from './list-query.js';
import { listResponse } from './list-response.js';
import { streamList } from './list-stream.js';
import { parseId } from './numeric-id.js';
import { closePaths, mount } from './openapi/route-table.js';

const NAME_TAKEN = 'An API client with this name already exists.';
const SUBJECT_TAKEN = 'An API client with this api_client_id already exists.';

/** POST, GET, PUT and DELETE of API clients; the admin check (app.ts) runs before. */
export function apiClientsRouter(
  store: ClientStore,
  invalidator: DecisionInvalidator,
  log: Logger,
): Router {
  const router = Router({ strict: false });
  mount(router, OPS.create, async (req, res) => {
    const input = parseCreateApiClient(req.body);
    if (!input.ok) throw new ValidationError(input.errors);
    const { name, isAdmin, generateApiKey, apiClientId } = input.value;
    const key = generateApiKey ? generateSecret() : null;
    const created = await store.create({ name, isAdmin, apiClientId }, key?.hash ?? null);
    if (!created.ok) {
      throw created.conflict === 'name'
        ? new ConflictError('name', NAME_TAKEN)
        : new ConflictError('api_client_id', SUBJECT_TAKEN);
    }
    const id = created.row.id;
    // DCT's SDKs read the id as api_client_entity_id; the seed's api_key_id stays beside it.
    const ids = { api_key_id: id, api_client_entity_id: id };
    res
      .status(201)
      .set('Cache-Control', 'no-store')
      .json(key ? { ...ids, token: formatApiKey(id, key.secret) } : ids);
  });

  mount(router, OPS.list, async (req, res) => {
    const query = parseListQuery(req.query as Record<string, unknown>);
    if (!query.ok) throw new ValidationError(query.errors);
    const { sort, limit, cursor } = query.value;
    if (limit === null) {
      // HEAD of everything: the headers a GET would have, without walking the table for a
      // body nobody receives.
      if (req.method === 'HEAD') {
        res.status(200).type('application/json; charset=utf-8').end();
        return;
      }
      await streamList(res, store, sort, cursor, log);
      return;
    }
    const page = await store.list({
      sort,
      limit,
      from: cursor ? { direction: cursor.direction, key: cursor.key } : null,
    });
    const field = sortField(sort);
    res.json(listResponse(page, sort, cursor, (row) => keyOf(row, field)));
  });

  mount(router, OPS.get, async (req, res) => {
    const row = await store.get(idParam(req.params.id));
    if (!row) throw new NotFoundError('No API client has this id.');
    res.json(toRecord(row));
  });

  mount(router, OPS.update, async (req, res) => {
    const id = idParam(req.params.id);
    const input = parseUpdateApiClient(req.body);
    if (!input.ok) throw new ValidationError(input.errors);
    const outcome = await store.update(id, input.value);
    // Like a delete: this gateway's nginx forgets what it decided about the client before the
    // caller sees the answer; the others hear of it through LISTEN.
    if (outcome.ok) await invalidator.clients([outcome.row.id]);
    sendUpdated(res, outcome);
  });

  mount(router, OPS.delete, async (req, res) => {
    const row = await store.delete(idParam(req.params.id));
    if (!row) throw new NotFoundError('No API client has this id.');
    // Before answering: once the caller sees the answer, this gateway refuses the key. Other
    // sidecars hear of it through LISTEN (the trigger also notifies this one; harmless).
    await invalidator.clients([row.id]);
    res.json(toRecord(row));
  });
  closePaths(router, Object.values(OPS));

  return router;
}

function sendUpdated(res: Response, outcome: UpdateOutcome): void {
  if (outcome.ok) {
    res.set('Cache-Control', 'no-store').json(toRecord(outcome.row));
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

function idParam(text: unknown): number {
  const id = typeof text === 'string' ? parseId(text) : null;
  if (id === null) {
    throw new ValidationError([
      { code: 'INVALID_ID', field: 'id', message: 'The id must be a positive integer.' },
    ]);
  }
  return id;
}
