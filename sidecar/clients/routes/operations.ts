import { z } from 'zod';
import { clientIdParams } from '../../http/numeric-id.js';
import type { Operation } from '../../http/operation.js';
import { listQuerySchema } from '../listing/query.js';
import { apiClientListSchema } from '../listing/response.js';
import { apiClientRecordSchema } from '../store/api-client.js';
import { createApiClientSchema, updateApiClientSchema } from './client-input.js';
import { rotateApiClientSchema } from './rotate-input.js';

export const API_CLIENTS_PATH = '/v1/management/api-clients';
const ONE_CLIENT = `${API_CLIENTS_PATH}/{id}`;
const TAG = 'API clients';

const id = z.int().min(1).max(Number.MAX_SAFE_INTEGER);

/** A creation's answer: the ids, and the API key when one was asked for (shown only here). */
export const apiClientCreatedSchema = z
  .strictObject({
    api_key_id: id.meta({ description: 'The new client id.' }),
    api_client_entity_id: id.meta({ description: "The same number (DCT's name)." }),
    token: z
      .string()
      .regex(/^[1-9][0-9]*\.[A-Za-z0-9_-]{43}$/)
      .optional()
      .meta({ description: 'The API key `<id>.<secret>`, when generate_api_key was true.' }),
  })
  .meta({ id: 'ApiClientCreated', description: "The created client's ids and its key." });

/** A rotation's answer: the new key, and until when the old one is still accepted. */
export const apiClientRotatedSchema = z
  .strictObject({
    api_key_id: id.meta({ description: 'The client id.' }),
    api_client_entity_id: id.meta({ description: "The same number (DCT's name)." }),
    token: z
      .string()
      .regex(/^[1-9][0-9]*\.[A-Za-z0-9_-]{43}$/)
      .meta({ description: 'The new API key `<id>.<secret>` (shown only here).' }),
    previous_key_expires_at: z.iso.datetime().nullable().meta({
      description: 'Until when the old secret is accepted; null: refused at once.',
    }),
  })
  .meta({ id: 'ApiClientRotated', description: "The client's new key." });

/** The API-client routes (router.ts mounts its handlers on these). */
export const API_CLIENT_OPERATIONS = {
  create: {
    method: 'post',
    path: API_CLIENTS_PATH,
    operationId: 'createApiClient',
    tag: TAG,
    summary: 'Create an API client',
    body: createApiClientSchema,
    success: {
      201: { description: 'Created.', schema: apiClientCreatedSchema },
    },
    errors: [409],
  },
  list: {
    method: 'get',
    path: API_CLIENTS_PATH,
    operationId: 'listApiClients',
    tag: TAG,
    summary: 'List API clients',
    description:
      'Keyset-paged by `limit` and `cursor`; without `limit`, every client (streamed). A cursor ' +
      'carries its order: `sort` may be left out with it, but not name another.',
    query: listQuerySchema,
    success: { 200: { description: 'The clients.', schema: apiClientListSchema } },
    errors: [400],
  },
  get: {
    method: 'get',
    path: ONE_CLIENT,
    operationId: 'getApiClient',
    tag: TAG,
    summary: 'Read an API client',
    params: clientIdParams,
    success: { 200: { description: 'The client.', schema: apiClientRecordSchema } },
    errors: [400, 404],
  },
  update: {
    method: 'put',
    path: ONE_CLIENT,
    operationId: 'updateApiClient',
    tag: TAG,
    summary: 'Change an API client',
    description: 'Cached decisions about the client are dropped before the answer.',
    params: clientIdParams,
    body: updateApiClientSchema,
    success: {
      200: { description: 'The changed client.', schema: apiClientRecordSchema },
    },
    errors: [400, 404, 409],
  },
  delete: {
    method: 'delete',
    path: ONE_CLIENT,
    operationId: 'deleteApiClient',
    tag: TAG,
    summary: 'Delete an API client',
    description: 'Its key and tokens are refused from the answer on.',
    params: clientIdParams,
    success: { 200: { description: 'The deleted client.', schema: apiClientRecordSchema } },
    errors: [400, 404],
  },
  rotate: {
    method: 'post',
    path: `${ONE_CLIENT}/rotate`,
    operationId: 'rotateApiClientKey',
    tag: TAG,
    summary: 'Rotate an API key',
    description:
      'A new secret at once; the old one stays valid for the grace period (only one previous ' +
      'secret: rotating during a grace drops the older one). 409 `NO_API_KEY` for a client ' +
      'that authenticates by bearer token only.',
    params: clientIdParams,
    body: rotateApiClientSchema,
    success: {
      200: { description: 'The new key.', schema: apiClientRotatedSchema },
    },
    errors: [400, 404, 409],
  },
} satisfies Record<string, Operation>;
