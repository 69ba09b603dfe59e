import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import { expressPath, type Operation } from '../../../sidecar/http/operation.js';
import { allowedMethods } from '../../../sidecar/http/route-table.js';
import { toJsonSchema } from '../../../sidecar/management/json-schema.js';
import { buildOpenApiDocument } from '../../../sidecar/management/openapi-document.js';

const thing = z.strictObject({ n: z.int() }).meta({ id: 'UnitThing' });
const read: Operation = {
  method: 'get',
  path: '/v1/management/things/{id}',
  operationId: 'getThing',
  tag: 'Things',
  summary: 'Read a thing',
  params: z.strictObject({ id: z.int().min(1).meta({ description: 'The id.' }) }),
  success: { 200: { description: 'The thing.', schema: thing } },
  errors: [404],
};
const change: Operation = {
  ...read,
  method: 'put',
  operationId: 'putThing',
  summary: 'Change a thing',
  body: thing,
  errors: [404, 409],
};

type Doc = {
  paths: Record<
    string,
    Record<string, { responses: Record<string, unknown> } & Record<string, unknown>>
  >;
  components: { schemas: Record<string, unknown>; responses: Record<string, unknown> };
};
const build = (ops: Operation[]) => buildOpenApiDocument(ops) as unknown as Doc;

describe('buildOpenApiDocument', () => {
  test('a GET is documented with its HEAD (same statuses, no body) and the admin errors', () => {
    const doc = build([read]);
    const item = doc.paths['/v1/management/things/{id}']!;
    expect(Object.keys(item.get!.responses)).toEqual(['200', '401', '403', '404', '503']);
    expect(Object.keys(item.head!.responses)).toEqual(['200', '401', '403', '404', '503']);
    const noStore = { 'Cache-Control': { $ref: '#/components/headers/NoStore' } };
    expect(item.head!.responses['200']).toEqual({ description: 'The thing.', headers: noStore });
    // Every answer says it is not to be stored, errors included (HEAD's have no body).
    expect(item.get!.responses['200']).toMatchObject({ headers: noStore });
    expect(item.head!.responses['404']).toEqual({
      description: 'No such resource.',
      headers: noStore,
    });
    expect(doc.components.responses.NotFound).toMatchObject({ headers: noStore });
    expect(item.get!.parameters).toEqual([
      {
        name: 'id',
        in: 'path',
        required: true,
        description: 'The id.',
        schema: { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER },
      },
    ]);
    expect(doc.components.schemas.UnitThing).toEqual({
      type: 'object',
      properties: {
        n: { type: 'integer', minimum: Number.MIN_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER },
      },
      required: ['n'],
      additionalProperties: false,
    });
  });

  test('a body adds 400, 413 and 415 and a required JSON request body; no HEAD for a PUT', () => {
    const item = build([read, change]).paths['/v1/management/things/{id}']!;
    expect(Object.keys(item.put!.responses)).toEqual([
      '200',
      '400',
      '401',
      '403',
      '404',
      '409',
      '413',
      '415',
      '503',
    ]);
    expect(item.put!.requestBody).toEqual({
      required: true,
      content: { 'application/json': { schema: { $ref: '#/components/schemas/UnitThing' } } },
    });
    expect(Object.keys(item)).toEqual(['get', 'head', 'put']);
  });

  test('only the error responses used are defined, and only once', () => {
    const doc = build([read]);
    expect(Object.keys(doc.components.responses)).toEqual([
      'Unauthorized',
      'Forbidden',
      'NotFound',
      'ServiceUnavailable',
    ]);
  });

  test('the same method and path declared twice is refused', () => {
    expect(() => build([read, { ...read, operationId: 'again' }])).toThrow(/declared twice/);
  });

  test('the same text twice gives the same document', () => {
    expect(JSON.stringify(build([read, change]))).toBe(JSON.stringify(build([read, change])));
  });
});

describe('toJsonSchema', () => {
  test('one component id with two different meanings is refused', () => {
    const components = {};
    toJsonSchema(z.object({ a: z.string() }).meta({ id: 'UnitTwice' }), 'output', components);
    expect(() =>
      toJsonSchema(z.object({ b: z.int() }).meta({ id: 'UnitTwice' }), 'output', components),
    ).toThrow(/UnitTwice/);
  });
});

describe('route table', () => {
  test('expressPath turns {name} into :name', () => {
    expect(expressPath('/v1/a/{id}/b/{other_id}')).toBe('/v1/a/:id/b/:other_id');
  });

  test('Allow lists a GET with its HEAD, in a fixed order', () => {
    expect(allowedMethods([change, read], read.path)).toEqual(['GET', 'HEAD', 'PUT']);
    expect(allowedMethods([change], read.path)).toEqual(['PUT']);
    expect(allowedMethods([read], '/elsewhere')).toEqual([]);
  });
});
