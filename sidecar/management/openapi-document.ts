import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { packageRoot } from '../../common/package-root.js';
import { AUDIT_OPERATIONS } from '../audit/audit-operations.js';
import { API_CLIENT_OPERATIONS } from '../clients/routes/operations.js';
import { errorBodySchema } from '../errors/error-schema.js';
import { ADMIN_ERRORS, type ErrorStatus, type Operation } from '../http/operation.js';
import { SETTINGS_OPERATIONS } from '../settings/settings-operations.js';
import { USAGE_OPERATIONS } from '../usage/usage-operations.js';
import { type JsonSchema, toJsonSchema } from './json-schema.js';

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

/** Every management route, in the document's order: a new route group is added here. */
export const MANAGEMENT_OPERATIONS: readonly Operation[] = [
  ...Object.values(API_CLIENT_OPERATIONS),
  ...Object.values(USAGE_OPERATIONS),
  ...Object.values(AUDIT_OPERATIONS),
  ...Object.values(SETTINGS_OPERATIONS),
  ...Object.values(OPENAPI_OPERATIONS),
];

/** Where the document is committed; `npm run openapi` rewrites it, a test checks it. */
export const COMMITTED_DOCUMENT = join(packageRoot(), 'docs', 'openapi.json');

/** The document as committed: two-space JSON and a final newline. */
export function documentText(): string {
  return `${JSON.stringify(buildOpenApiDocument(MANAGEMENT_OPERATIONS), null, 2)}\n`;
}

/** The error answers, shared by every operation as components/responses. */
const ERROR_RESPONSES: Record<ErrorStatus, { name: string; description: string }> = {
  400: { name: 'BadRequest', description: 'The request is not valid: every problem is listed.' },
  401: {
    name: 'Unauthorized',
    description: 'No credential, or one that is malformed, unknown, wrong or expired.',
  },
  403: { name: 'Forbidden', description: 'A valid credential of a client that is not an admin.' },
  404: { name: 'NotFound', description: 'No such resource.' },
  409: { name: 'Conflict', description: 'The change collides with another client.' },
  413: { name: 'PayloadTooLarge', description: 'The request body is larger than 64 KiB.' },
  415: {
    name: 'UnsupportedMediaType',
    description: 'The request body is not JSON in UTF-8 (Content-Type: application/json).',
  },
  503: { name: 'ServiceUnavailable', description: 'The database cannot be reached; retry later.' },
};

/** On every answer, errors included: set before any route runs (http/middleware.ts noStore). */
const NO_STORE_HEADER = {
  description: '`no-store`: an answer may hold a key, a record or a change just made.',
  schema: { type: 'string', const: 'no-store' },
};
const NO_STORE = { 'Cache-Control': { $ref: '#/components/headers/NoStore' } };

const DESCRIPTION = [
  'The management API of the authenticating gateway. Every route needs an admin credential:',
  'an API key (`Authorization: apk <id>.<secret>`) or, where OIDC is enabled, a bearer token',
  'of an admin client. A method a path does not serve is answered 405 with `Allow`; a path',
  'that does not exist, 404. Every error has the one shape `ErrorBody`. Every answer, errors',
  'included, carries `Cache-Control: no-store`.',
].join(' ');

/** Builds the OpenAPI 3.1 document of `operations`, deterministically (same input, same text). */
export function buildOpenApiDocument(operations: readonly Operation[]): Record<string, unknown> {
  const schemas: Record<string, JsonSchema> = {};
  const paths: Record<string, Record<string, unknown>> = {};
  const usedErrors = new Set<ErrorStatus>();
  for (const op of operations) {
    const item = paths[op.path] ?? {};
    paths[op.path] = item;
    if (item[op.method]) throw new Error(`${op.method} ${op.path} is declared twice`);
    const errors = errorStatuses(op);
    for (const status of errors) usedErrors.add(status);
    item[op.method] = operationObject(op, errors, schemas, false);
    if (op.method === 'get') item.head = operationObject(op, errors, schemas, true);
  }
  const errorRef = toJsonSchema(errorBodySchema, 'output', schemas);
  const responses: Record<string, unknown> = {};
  for (const status of [...usedErrors].sort()) {
    const { name, description } = ERROR_RESPONSES[status];
    responses[name] = {
      description,
      headers: NO_STORE,
      content: { 'application/json': { schema: errorRef } },
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Authenticating gateway management API',
      version: '1.0.0',
      description: DESCRIPTION,
    },
    security: [{ apiKey: [] }, { bearer: [] }],
    tags: [...new Set(operations.map((op) => op.tag))].map((name) => ({ name })),
    paths: sortKeys(paths),
    components: {
      schemas: sortKeys(schemas),
      responses,
      headers: { NoStore: NO_STORE_HEADER },
      securitySchemes: {
        apiKey: {
          type: 'http',
          scheme: 'apk',
          description: 'An API key: `Authorization: apk <api_key_id>.<secret>`.',
        },
        bearer: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description: 'An OIDC access token of an admin client (when OIDC is enabled).',
        },
      },
    },
  };
}

/** The route's own errors, the admin check's, and a body's (400, 413, 415), in order. */
function errorStatuses(op: Operation): ErrorStatus[] {
  const all = new Set<ErrorStatus>([...op.errors, ...ADMIN_ERRORS]);
  if (op.body) for (const status of [400, 413, 415] as const) all.add(status);
  return [...all].sort((a, b) => a - b);
}

function operationObject(
  op: Operation,
  errors: ErrorStatus[],
  schemas: Record<string, JsonSchema>,
  head: boolean,
): Record<string, unknown> {
  const parameters = [
    ...parametersOf(op.params, 'path', schemas),
    ...parametersOf(op.query, 'query', schemas),
  ];
  const responses: Record<string, unknown> = {};
  for (const [status, success] of Object.entries(op.success)) {
    const response: Record<string, unknown> = {
      description: success.description,
      headers: NO_STORE,
    };
    // HEAD: the same status and headers as GET, never a body.
    if (success.schema && !head) {
      response.content = {
        'application/json': { schema: toJsonSchema(success.schema, 'output', schemas) },
      };
    }
    responses[status] = response;
  }
  for (const status of errors) {
    const ref = { $ref: `#/components/responses/${ERROR_RESPONSES[status].name}` };
    // A HEAD answer's error has no body either; its status is still documented.
    responses[status] = head
      ? { description: ERROR_RESPONSES[status].description, headers: NO_STORE }
      : ref;
  }
  return {
    operationId: head ? `${op.operationId}Head` : op.operationId,
    tags: [op.tag],
    summary: head ? `${op.summary} (headers only)` : op.summary,
    ...(op.description ? { description: op.description } : {}),
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(op.body && !head
      ? {
          requestBody: {
            required: true,
            content: { 'application/json': { schema: toJsonSchema(op.body, 'input', schemas) } },
          },
        }
      : {}),
    responses,
  };
}

/** Each field of a params or query object as one parameter; its description moves up. */
function parametersOf(
  shape: z.ZodObject | undefined,
  where: 'path' | 'query',
  schemas: Record<string, JsonSchema>,
): Record<string, unknown>[] {
  if (!shape) return [];
  return Object.entries(shape.shape).map(([name, field]) => {
    const { description, ...schema } = toJsonSchema(field as z.ZodType, 'input', schemas);
    return {
      name,
      in: where,
      required: where === 'path' || !(field as z.ZodType).safeParse(undefined).success,
      ...(typeof description === 'string' ? { description } : {}),
      schema,
    };
  });
}

function sortKeys<T>(record: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => a.localeCompare(b)));
}

// `npm run openapi` runs this file itself: it rewrites docs/openapi.json from the route
// declarations. Imported (by the sidecar, by tests), it writes nothing.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(COMMITTED_DOCUMENT, documentText());
  process.stdout.write(`wrote ${COMMITTED_DOCUMENT}\n`);
}
