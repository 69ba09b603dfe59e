import { type Response, Router } from 'express';
import type { Authenticator } from '../auth/authenticator.js';
import { toRecord } from '../clients/api-client.js';
import { keyOf, sortField } from '../clients/client-order.js';
import type { ClientStore, UpdateOutcome } from '../clients/client-store.js';
import { ConflictError, NotFoundError, ValidationError } from '../errors/api-error.js';
import { formatApiKey, generateSecret } from '../keys/api-key.js';
import type { Logger } from '../log.js';
import { requestIdFields } from '../request-id.js';
import type { DecisionInvalidator } from '../revocation/nginx-control.js';
import { parseCreateApiClient, parseUpdateApiClient } from './api-client-input.js';
import { jsonBody } from './json-body.js';
import { parseListQuery } from './list-query.js';
import { listResponse } from './list-response.js';
import { streamList } from './list-stream.js';
import { allowOnly } from './method-guard.js';
import { parseId } from './numeric-id.js';
import { requireAdmin } from './require-admin.js';

export const API_CLIENTS_PATH = '/v1/management/api-clients';

const NAME_TAKEN = 'An API client with this name already exists.';
const SUBJECT_TAKEN = 'An API client with this api_client_id already exists.';

/** POST, GET, PUT and DELETE of API clients; admin credential required for all of them. */
export function apiClientsRouter(
  store: ClientStore,
  authenticator: Authenticator,
  invalidator: DecisionInvalidator,
  log: Logger,
): Router {
  const router = Router({ strict: false });
  // Everything under /v1/management needs an admin, even paths that do not exist.
  router.use('/v1/management', requireAdmin(authenticator));

  router.post(API_CLIENTS_PATH, jsonBody, async (req, res) => {
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

  router.get(API_CLIENTS_PATH, async (req, res) => {
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
      await streamList(res, store, sort, cursor, log.child(requestIdFields(req.headers)));
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
  router.all(API_CLIENTS_PATH, allowOnly(['GET', 'HEAD', 'POST']));

  router.get(`${API_CLIENTS_PATH}/:id`, async (req, res) => {
    const row = await store.get(idParam(req.params.id));
    if (!row) throw new NotFoundError('No API client has this id.');
    res.json(toRecord(row));
  });

  router.put(`${API_CLIENTS_PATH}/:id`, jsonBody, async (req, res) => {
    const id = idParam(req.params.id as string);
    const input = parseUpdateApiClient(req.body);
    if (!input.ok) throw new ValidationError(input.errors);
    const outcome = await store.update(id, input.value);
    // Like a delete: this gateway's nginx forgets what it decided about the client before the
    // caller sees the answer; the others hear of it through LISTEN.
    if (outcome.ok) await invalidator.clients([outcome.row.id]);
    sendUpdated(res, outcome);
  });

  router.delete(`${API_CLIENTS_PATH}/:id`, async (req, res) => {
    const row = await store.delete(idParam(req.params.id));
    if (!row) throw new NotFoundError('No API client has this id.');
    // Before answering: once the caller sees the answer, this gateway refuses the key. Other
    // sidecars hear of it through LISTEN (the trigger also notifies this one; harmless).
    await invalidator.clients([row.id]);
    res.json(toRecord(row));
  });
  router.all(`${API_CLIENTS_PATH}/:id`, allowOnly(['GET', 'HEAD', 'PUT', 'DELETE']));

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

function idParam(text: string | undefined): number {
  const id = parseId(text ?? '');
  if (id === null) {
    throw new ValidationError([
      { code: 'INVALID_ID', field: 'id', message: 'The id must be a positive integer.' },
    ]);
  }
  return id;
}
