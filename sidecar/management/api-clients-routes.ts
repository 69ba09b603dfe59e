import { Router } from 'express';
import type { Authenticator } from '../auth/authenticator.js';
import { toRecord } from '../clients/api-client.js';
import type { ClientStore } from '../clients/client-store.js';
import { ConflictError, NotFoundError, ValidationError } from '../errors/api-error.js';
import { formatApiKey, generateSecret } from '../keys/api-key.js';
import type { DecisionInvalidator } from '../revocation/nginx-control.js';
import { parseCreateApiClient, parseId, parseListQuery } from './api-client-input.js';
import { jsonBody } from './json-body.js';
import { allowOnly } from './method-guard.js';
import { requireAdmin } from './require-admin.js';

export const API_CLIENTS_PATH = '/v1/management/api-clients';

/** POST, GET and DELETE of API clients; admin credential required for all of them. */
export function apiClientsRouter(
  store: ClientStore,
  authenticator: Authenticator,
  invalidator: DecisionInvalidator,
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
        ? new ConflictError('name', 'An API client with this name already exists.')
        : new ConflictError(
            'api_client_id',
            'An API client with this api_client_id already exists.',
          );
    }
    const id = created.row.id;
    res
      .status(201)
      .set('Cache-Control', 'no-store')
      .json(key ? { api_key_id: id, token: formatApiKey(id, key.secret) } : { api_key_id: id });
  });

  router.get(API_CLIENTS_PATH, async (req, res) => {
    const query = parseListQuery(req.query as Record<string, unknown>);
    if (!query.ok) throw new ValidationError(query.errors);
    const page = await store.list(query.value.limit, query.value.afterId);
    res.json({
      items: page.rows.map(toRecord),
      response_metadata: {
        total: page.total,
        next_cursor: page.nextCursor === null ? null : String(page.nextCursor),
      },
    });
  });
  router.all(API_CLIENTS_PATH, allowOnly(['GET', 'HEAD', 'POST']));

  router.get(`${API_CLIENTS_PATH}/:id`, async (req, res) => {
    const row = await store.get(idParam(req.params.id));
    if (!row) throw new NotFoundError('No API client has this id.');
    res.json(toRecord(row));
  });

  router.delete(`${API_CLIENTS_PATH}/:id`, async (req, res) => {
    const row = await store.delete(idParam(req.params.id));
    if (!row) throw new NotFoundError('No API client has this id.');
    // Before answering: once the caller sees the answer, this gateway refuses the key. Other
    // sidecars hear of it through LISTEN (the trigger also notifies this one; harmless).
    await invalidator.clients([row.id]);
    res.json(toRecord(row));
  });
  router.all(`${API_CLIENTS_PATH}/:id`, allowOnly(['GET', 'HEAD', 'DELETE']));

  return router;
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
