import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ApiKeyVerifier } from '../../sidecar/auth/api-key-verifier.js';
import { Authenticator } from '../../sidecar/auth/authenticator.js';
import { SORTS } from '../../sidecar/clients/client-order.js';
import { silentLogger } from '../../sidecar/log.js';
import { parseCreateApiClient } from '../../sidecar/management/api-client-input.js';
import { createManagementApp } from '../../sidecar/management/app.js';
import { parseListQuery } from '../../sidecar/management/list-query.js';
import { parseId } from '../../sidecar/management/numeric-id.js';
import { decodeCursor, encodeCursor } from '../../sidecar/management/page-cursor.js';
import { directoryOf, row } from '../unit/support/clients.js';
import { serve } from '../unit/support/serve.js';
import { anyJson, anyText, FUZZ_TIMEOUT_MS, params } from './runs.js';
import { send } from './support/keep-alive.js';
import { MemoryClientStore } from './support/memory-store.js';

/** The one error shape: {"errors":[{code,message,field?}, ...]} with at least one entry. */
function expectErrorShape(value: unknown): void {
  expect(value).toEqual({
    errors: expect.arrayContaining([expect.objectContaining({ code: expect.any(String) })]),
  });
  for (const detail of (value as { errors: Record<string, unknown>[] }).errors) {
    expect(Object.keys(detail).every((k) => ['code', 'message', 'field'].includes(k))).toBe(true);
    expect(typeof detail.message).toBe('string');
    if ('field' in detail) expect(typeof detail.field).toBe('string');
  }
}

const FORBIDDEN_TEXT = /[\p{Cc}\p{Cs}\u2028\u2029\u202a-\u202e\u2066-\u2069]/u;
const clean = (v: unknown, max: number) =>
  typeof v === 'string' &&
  v.length >= 1 &&
  v.length <= max &&
  !FORBIDDEN_TEXT.test(v) &&
  v.trim() === v;

/** The reference for a creation body, written from the API description, not from the schema. */
function acceptable(body: unknown): boolean {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return false;
  const b = body as Record<string, unknown>;
  if (
    Object.keys(b).some(
      (k) => !['name', 'is_admin', 'generate_api_key', 'api_client_id'].includes(k),
    )
  )
    return false;
  if (
    !clean(b.name, 200) ||
    typeof b.is_admin !== 'boolean' ||
    typeof b.generate_api_key !== 'boolean'
  )
    return false;
  const id = b.api_client_id;
  if (id !== undefined && id !== null && !clean(id, 255)) return false;
  return b.generate_api_key === true || (id !== undefined && id !== null);
}

const field = fc.oneof(
  anyJson,
  anyText(10),
  fc.boolean(),
  fc.constant(null),
  fc.string({ maxLength: 300 }),
);
const body = fc.oneof(
  anyJson,
  fc.record(
    { name: field, is_admin: field, generate_api_key: field, api_client_id: field, extra: field },
    { requiredKeys: [] },
  ),
);

describe('management input', () => {
  test(
    'a creation body is accepted exactly when the reference accepts it; errors in the one shape',
    () => {
      fc.assert(
        fc.property(body, (input) => {
          const result = parseCreateApiClient(input);
          expect(result.ok).toBe(acceptable(input));
          if (!result.ok) {
            expect(result.errors.length).toBeGreaterThan(0);
            expectErrorShape({ errors: result.errors });
          }
        }),
        params(),
      );
    },
    FUZZ_TIMEOUT_MS,
  );

  const queryValue = fc.oneof(
    anyText(8),
    fc.integer({ min: -5, max: 2000 }).map(String),
    fc.array(anyText(4), { maxLength: 2 }),
  );
  test(
    'list queries: never throw; accepted limits, sorts and cursors are canonical and in range',
    () => {
      fc.assert(
        fc.property(
          fc.dictionary(
            fc.oneof(fc.constantFrom('limit', 'cursor', 'sort'), anyText(6)),
            fc.oneof(queryValue, fc.constantFrom(...SORTS)),
            { maxKeys: 3 },
          ),
          (query) => {
            const result = parseListQuery(query);
            if (result.ok) {
              expect(Object.keys(query).every((k) => ['limit', 'cursor', 'sort'].includes(k))).toBe(
                true,
              );
              const { limit, sort, cursor } = result.value;
              if (limit !== null) {
                expect(String(limit)).toBe(query.limit);
                expect(limit >= 1 && limit <= 1000).toBe(true);
              }
              expect(SORTS).toContain(sort);
              if (query.sort !== undefined) expect(sort).toBe(query.sort);
              expect(cursor === null).toBe(query.cursor === undefined);
            } else {
              expectErrorShape({ errors: result.errors });
            }
          },
        ),
        params(),
      );
    },
    FUZZ_TIMEOUT_MS,
  );

  test(
    'ids and id cursors round-trip for every id below 2^53, and nothing else parses',
    () => {
      fc.assert(
        fc.property(
          fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
          fc.constantFrom('after' as const, 'before' as const),
          anyText(20),
          (id, direction, text) => {
            expect(parseId(String(id))).toBe(id);
            const cursor = { sort: 'id' as const, direction, key: [id] };
            expect(decodeCursor(encodeCursor(cursor))).toEqual(cursor);
            const listed = parseListQuery({ cursor: encodeCursor(cursor) });
            expect(listed.ok && listed.value.cursor).toEqual(cursor);
            const parsed = parseId(text);
            if (parsed !== null) expect(String(parsed)).toBe(text);
            expect(decodeCursor(text) === null || /^[A-Za-z0-9_-]+$/.test(text)).toBe(true);
          },
        ),
        params([
          [1, 'after', '0'],
          [Number.MAX_SAFE_INTEGER, 'before', '9007199254740992'],
        ]),
      );
    },
    FUZZ_TIMEOUT_MS,
  );
});

describe('management HTTP', () => {
  const ADMIN = 'a'.repeat(43);
  let server: Awaited<ReturnType<typeof serve>>;
  beforeAll(async () => {
    const store = new MemoryClientStore();
    const authenticator = new Authenticator(
      new ApiKeyVerifier(directoryOf([row(1, { secret: ADMIN, isAdmin: true })])),
      null,
    );
    const app = createManagementApp(
      store.asStore(),
      authenticator,
      // No nginx here: every invalidation succeeds.
      { clients: async () => true, all: async () => true },
      silentLogger,
    );
    server = await serve(app);
  });
  afterAll(() => server.close());

  const pathChar = fc.constantFrom(
    ...'aZ09-._~!$&()*+,;=:@/%?#[]'.split(''),
    '%2F',
    '%00',
    '%zz',
    '%e2%80%ae',
    '..',
  );
  const path = fc.oneof(
    fc.constantFrom('/v1/management/api-clients', '/v1/management/api-clients/', '/v1/management/'),
    fc
      .tuple(
        fc.constantFrom('/v1/management/api-clients/', '/v1/management/', '/'),
        fc.array(pathChar, { maxLength: 12 }),
      )
      .map(([p, cs]) => p + cs.join('')),
  );
  const contentType = fc.constantFrom(
    undefined,
    'application/json',
    'application/json; charset=utf-8',
    'application/json; charset=latin1',
    'text/plain',
    'application/x-www-form-urlencoded',
    'APPLICATION/JSON',
  );
  const requestBody = fc.oneof(
    fc.constant(undefined),
    body.map((b) => JSON.stringify(b)),
    fc.string({ unit: 'binary', maxLength: 80 }),
    fc.uint8Array({ maxLength: 40 }).map((a) => Buffer.from(a)),
  );

  test(
    'no request gets a 5xx, and every error is in the one shape',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom('GET', 'POST', 'DELETE', 'PUT', 'PATCH', 'OPTIONS'),
          path,
          contentType,
          requestBody,
          async (method, p, type, payload) => {
            const headers: Record<string, string> = { Authorization: `apk 1.${ADMIN}` };
            if (type !== undefined) headers['Content-Type'] = type;
            const reply = await send(server.url, method, p, headers, payload);
            expect(reply.status).toBeLessThan(500);
            if (reply.status >= 400) expectErrorShape(JSON.parse(reply.text));
          },
        ),
        params<[string, string, string | undefined, string | Buffer | undefined]>([
          // Found by this property: the router's "Failed to decode param"
          // reached the error middleware as an unknown error and was answered 500.
          ['GET', '/v1/management/api-clients/%zz', undefined, undefined],
          ['DELETE', '/v1/management/api-clients/%e2%80', undefined, undefined],
        ]),
      );
    },
    FUZZ_TIMEOUT_MS,
  );
});
