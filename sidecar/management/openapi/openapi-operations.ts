import { z } from 'zod';
import type { Operation } from './operation.js';

export const OPENAPI_PATH = '/v1/management/openapi.json';

const documentSchema = z
  .looseObject({
    openapi: z.literal('3.1.0'),
    info: z.looseObject({ title: z.string(), version: z.string() }),
    paths: z.record(z.string(), z.unknown()),
  })
  .meta({ id: 'OpenApiDocument', description: 'An OpenAPI 3.1 document.' });

/** The document's own route (openapi-routes.ts mounts it). */
export const OPENAPI_OPERATIONS = {
  read: {
    method: 'get',
    path: OPENAPI_PATH,
    operationId: 'getOpenApiDocument',
    tag: 'OpenAPI',
    summary: 'This document',
    description: 'The same document is committed as docs/openapi.json.',
    success: { 200: { description: 'The OpenAPI 3.1 document.', schema: documentSchema } },
    errors: [],
  },
} satisfies Record<string, Operation>;
