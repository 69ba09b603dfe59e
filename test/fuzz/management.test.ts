import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ApiKeyVerifier } from '../../sidecar/auth/api-key-verifier.js';
import { Authenticator } from '../../sidecar/auth/authenticator.js';
import {
  decodeCursor,
  encodeCursor,
  type PageCursor,
} from '../../sidecar/clients/listing/cursor.js';
import { parseListQuery } from '../../sidecar/clients/listing/query.js';
import {
  parseCreateApiClient,
  parseUpdateApiClient,
} from '../../sidecar/clients/routes/client-input.js';
import { MAX_TEXT } from '../../sidecar/clients/store/api-client.js';
import { keyOf, SORTS, sortField } from '../../sidecar/clients/store/order.js';
import { parseId } from '../../sidecar/http/numeric-id.js';
import { silentLogger } from '../../sidecar/log.js';
import { createManagementApp } from '../../sidecar/management/app.js';
import { NO_INVALIDATOR } from '../../sidecar/nginx/invalidator.js';
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
// Lengths in characters (code points), as DCT counts them: an emoji is one, not two.
const clean = (v: unknown, max: number) =>
  typeof v === 'string' &&
  v.length >= 1 &&
  [...v].length <= max &&
  !FORBIDDEN_TEXT.test(v) &&
  v.trim() === v;

/** As the API description says: names and api_client_ids up to 1024 characters. */
const TEXT_LIMIT = 1024;

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
    !clean(b.name, TEXT_LIMIT) ||
    typeof b.is_admin !== 'boolean' ||
    typeof b.generate_api_key !== 'boolean'
  )
    return false;
  const id = b.api_client_id;
  if (id !== undefined && id !== null && !clean(id, TEXT_LIMIT)) return false;
  return b.generate_api_key === true || (id !== undefined && id !== null);
}

/** The reference for an update body (PUT): any of the three fields, at least one of them. */
function acceptableUpdate(body: unknown): boolean {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return false;
  const b = body as Record<string, unknown>;
  if (Object.keys(b).some((k) => !['name', 'is_admin', 'api_client_id'].includes(k))) return false;
  if (b.name !== undefined && !clean(b.name, TEXT_LIMIT)) return false;
  if (b.is_admin !== undefined && typeof b.is_admin !== 'boolean') return false;
  const id = b.api_client_id;
  if (id !== undefined && id !== null && !clean(id, TEXT_LIMIT)) return false;
  return b.name !== undefined || b.is_admin !== undefined || id !== undefined;
}

/** One character repeated up to the limit and a little past it, whatever its UTF-8 width. */
const longText = fc
  .tuple(
    fc.integer({ min: 0, max: TEXT_LIMIT + 4 }),
    fc.constantFrom('a', 'é', '中', '😀', '"', '\\', ' ', '\u202e'),
  )
  .map(([n, c]) => c.repeat(n));
/** Text right at the length limit, with anything at its end. */
const nearLimit = fc
  .tuple(fc.integer({ min: TEXT_LIMIT - 4, max: TEXT_LIMIT + 2 }), anyText(3))
  .map(([n, t]) => 'x'.repeat(n) + t);

const field = fc.oneof(
  anyJson,
  anyText(10),
  fc.boolean(),
  fc.constant(null),
  fc.string({ maxLength: 300 }),
  longText,
  nearLimit,
);
const body = fc.oneof(
  anyJson,
  fc.record(
    { name: field, is_admin: field, generate_api_key: field, api_client_id: field, extra: field },
    { requiredKeys: [] },
  ),
);
const updateBody = fc.oneof(
  anyJson,
  fc.record(
    { name: field, is_admin: field, api_client_id: field, extra: field },
    { requiredKeys: [] },
  ),
  fc.record({ name: field, is_admin: field, api_client_id: field }, { requiredKeys: [] }),
);

type UpdateBody = typeof updateBody extends fc.Arbitrary<infer T> ? T : never;

/** Any cursor the gateway can hand out: a sort, a direction, and a key of that sort's shape. */
const keyText = fc.oneof(anyText(20), longText);
const rowId = fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER });
const anyCursor: fc.Arbitrary<PageCursor> = fc
  .tuple(fc.constantFrom(...SORTS), fc.constantFrom('after' as const, 'before' as const))
  .chain(([sort, direction]) => {
    const field = sortField(sort);
    const key =
      field === 'id'
        ? rowId.map((id) => [id])
        : field === 'name'
          ? fc.tuple(keyText, rowId)
          : fc.tuple(fc.boolean(), keyText, rowId);
    return key.map((k) => ({ sort, direction, key: k }));
  });

/** Text that looks like a cursor: base64url of JSON close to the real thing, or of anything. */
const cursorLike = fc.oneof(
  anyText(40),
  anyCursor.map(encodeCursor),
  anyCursor.map((c) => encodeCursor(c).slice(1)),
  anyCursor.map((c) => `${encodeCursor(c)}=`),
  fc
    .record(
      {
        s: fc.oneof(fc.constantFrom(...SORTS), anyJson),
        d: fc.oneof(fc.constantFrom('a', 'b'), anyJson),
        k: fc.oneof(
          fc.array(fc.oneof(rowId, fc.boolean(), anyText(5), anyJson), { maxLength: 4 }),
          anyJson,
        ),
        x: anyJson,
      },
      { requiredKeys: [] },
    )
    .map((v) => Buffer.from(JSON.stringify(v)).toString('base64url')),
  anyJson.map((v) => Buffer.from(JSON.stringify(v) ?? '').toString('base64url')),
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
      expect(MAX_TEXT).toBe(TEXT_LIMIT);
    },
    FUZZ_TIMEOUT_MS,
  );

  test(
    'an update body is accepted exactly when the reference accepts it, and changes only what it sends',
    () => {
      fc.assert(
        fc.property(updateBody, (input) => {
          const result = parseUpdateApiClient(input);
          expect(result.ok).toBe(acceptableUpdate(input));
          if (result.ok) {
            const b = input as Record<string, unknown>;
            expect(result.value).toEqual({
              ...(b.name !== undefined ? { name: b.name } : {}),
              ...(b.is_admin !== undefined ? { isAdmin: b.is_admin } : {}),
              ...(b.api_client_id !== undefined ? { apiClientId: b.api_client_id } : {}),
            });
          } else {
            expect(result.errors.length).toBeGreaterThan(0);
            expectErrorShape({ errors: result.errors });
          }
        }),
        params<[UpdateBody]>([
          // Found by this property when its reference counted UTF-16 units: 1024 characters
          // with an emoji among them are 1025 units, and are accepted.
          [{ api_client_id: `${'x'.repeat(TEXT_LIMIT - 1)}😀` }],
          [{ name: 'x'.repeat(TEXT_LIMIT + 1) }],
        ]),
      );
    },
    FUZZ_TIMEOUT_MS,
  );

  const queryValue = fc.oneof(
    anyText(8),
    fc.integer({ min: -5, max: 2000 }).map(String),
    fc.constantFrom(...SORTS),
    cursorLike,
    fc.array(anyText(4), { maxLength: 2 }),
  );
  test(
    'list queries are accepted exactly when the reference accepts them; never throw',
    () => {
      fc.assert(
        fc.property(
          fc.dictionary(
            fc.oneof(fc.constantFrom('limit', 'cursor', 'sort', 'name'), anyText(6)),
            queryValue,
            { maxKeys: 4 },
          ),
          (query) => {
            const result = parseListQuery(query);
            // The reference, from the API description: only these four parameters; limit a
            // canonical 1 to 1000; sort one of six; a cursor this gateway made, of the same sort;
            // name one text of 1 to 1024 characters.
            const { limit, sort, cursor, name } = query;
            const nameOk =
              name === undefined ||
              (typeof name === 'string' && name.length >= 1 && name.length <= TEXT_LIMIT);
            const limitOk =
              limit === undefined ||
              (typeof limit === 'string' &&
                /^[1-9][0-9]*$/.test(limit) &&
                Number(limit) >= 1 &&
                Number(limit) <= 1000);
            const sortOk = sort === undefined || (SORTS as readonly unknown[]).includes(sort);
            const decoded = typeof cursor === 'string' ? decodeCursor(cursor) : null;
            const cursorOk =
              cursor === undefined ||
              (decoded !== null && (sort === undefined || sort === decoded.sort));
            const known = Object.keys(query).every((k) =>
              ['limit', 'cursor', 'sort', 'name'].includes(k),
            );
            expect(result.ok).toBe(known && limitOk && sortOk && cursorOk && nameOk);
            if (result.ok) {
              expect(result.value).toEqual({
                sort: decoded?.sort ?? sort ?? 'id',
                limit: limit === undefined ? null : Number(limit),
                cursor: decoded,
                name: name ?? null,
              });
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
    'cursors round-trip (encode, then decode, gives the same cursor), however long their key',
    () => {
      fc.assert(
        fc.property(anyCursor, (cursor) => {
          const text = encodeCursor(cursor);
          expect(text).toMatch(/^[A-Za-z0-9_-]+$/);
          expect(decodeCursor(text)).toEqual(cursor);
          const query = parseListQuery({ cursor: text, sort: cursor.sort });
          expect(query.ok && query.value.cursor).toEqual(cursor);
        }),
        params<[PageCursor]>([
          // Found by this property: a name of 1024 three-byte characters made a cursor longer
          // than decodeCursor accepted, so the next page of such a listing was refused.
          [{ sort: 'name', direction: 'after', key: ['中'.repeat(TEXT_LIMIT), 1] }],
          [{ sort: 'name', direction: 'before', key: ['😀'.repeat(TEXT_LIMIT), 1] }],
          [
            {
              sort: '-api_client_id',
              direction: 'before',
              key: [false, '中'.repeat(TEXT_LIMIT), Number.MAX_SAFE_INTEGER],
            },
          ],
        ]),
      );
    },
    FUZZ_TIMEOUT_MS,
  );

  test(
    'any text decodes to a well-formed cursor or is refused in the one error shape; never throws',
    () => {
      fc.assert(
        fc.property(cursorLike, (text) => {
          const decoded = decodeCursor(text);
          const query = parseListQuery({ cursor: text });
          if (decoded === null) {
            expect(query.ok).toBe(false);
            if (!query.ok) {
              expectErrorShape({ errors: query.errors });
              expect(query.errors.map((e) => e.field)).toEqual(['cursor']);
            }
            return;
          }
          expect(SORTS).toContain(decoded.sort);
          expect(['after', 'before']).toContain(decoded.direction);
          // A key of its sort's shape: what keyOf gives for some row, id last.
          const [id] = decoded.key.slice(-1);
          expect(Number.isSafeInteger(id) && (id as number) >= 1).toBe(true);
          const field = sortField(decoded.sort);
          const shape = keyOf(
            { id: 1, name: 'n', apiClientId: field === 'api_client_id' ? 's' : null },
            field,
          ).map((v) => typeof v);
          expect(decoded.key.map((v) => typeof v)).toEqual(shape);
          expect(decodeCursor(encodeCursor(decoded))).toEqual(decoded);
          expect(query.ok && query.value).toEqual({
            sort: decoded.sort,
            limit: null,
            cursor: decoded,
            name: null,
          });
        }),
        params(),
      );
    },
    FUZZ_TIMEOUT_MS,
  );

  test(
    'ids round-trip for every id below 2^53, and nothing else parses',
    () => {
      fc.assert(
        fc.property(rowId, anyText(20), (id, text) => {
          expect(parseId(String(id))).toBe(id);
          const limit = parseListQuery({ limit: String(id) });
          expect(limit.ok).toBe(id <= 1000);
          const parsed = parseId(text);
          if (parsed !== null) expect(String(parsed)).toBe(text);
        }),
        params([
          [1, '0'],
          [Number.MAX_SAFE_INTEGER, '9007199254740992'],
        ]),
      );
    },
    FUZZ_TIMEOUT_MS,
  );
});

describe('management HTTP', () => {
  const LIST = '/v1/management/api-clients';
  const ADMIN = 'a'.repeat(43);
  let server: Awaited<ReturnType<typeof serve>>;
  beforeAll(async () => {
    const store = new MemoryClientStore();
    // A few rows, so GET, PUT and DELETE of small ids and paged listings reach real clients.
    for (let i = 1; i <= 6; i++) {
      await store.create(
        { name: `client ${i}`, isAdmin: i % 2 === 0, apiClientId: i % 3 === 0 ? null : `sub-${i}` },
        i % 3 === 0 || i === 4 ? Buffer.alloc(32, i) : null,
      );
    }
    // The longest name there can be in three-byte characters: its cursor is the longest.
    await store.create(
      { name: '中'.repeat(TEXT_LIMIT), isAdmin: false, apiClientId: null },
      Buffer.alloc(32),
    );
    const authenticator = new Authenticator(
      new ApiKeyVerifier(directoryOf([row(1, { secret: ADMIN, isAdmin: true })])),
      null,
    );
    let settings = { bootstrapLocked: false };
    const app = createManagementApp({
      store: store.asStore(),
      authenticator,
      invalidator: NO_INVALIDATOR,
      log: silentLogger,
      changes: store.changes(),
      auditDb: store.noDatabase(),
      settings: {
        read: async () => settings,
        update: async (next) => {
          const change = { before: settings, after: next };
          settings = next;
          return change;
        },
      },
    });
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
  const queryPart = fc
    .tuple(
      fc.oneof(fc.constantFrom('sort', 'limit', 'cursor', 'name'), anyText(4)),
      fc.oneof(
        fc.constantFrom(...SORTS),
        fc.integer({ min: -1, max: 1001 }).map(String),
        cursorLike,
        anyText(6),
      ),
    )
    // One escape left undone: a stray % reaches the query parser too.
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v).replace('%25', '%')}`);
  const query = fc.oneof(
    fc.constant(''),
    fc.array(queryPart, { minLength: 1, maxLength: 3 }).map((parts) => `?${parts.join('&')}`),
  );
  const path = fc.oneof(
    fc
      .tuple(
        fc.constantFrom(
          '/v1/management/api-clients',
          '/v1/management/api-clients/',
          '/v1/management/',
        ),
        query,
      )
      .map(([p, q]) => p + q),
    fc.integer({ min: 0, max: 8 }).map((id) => `/v1/management/api-clients/${id}`),
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
    updateBody.map((b) => JSON.stringify(b)),
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
            // A listing is whole JSON with its metadata, and the cursors it hands out lead on.
            if (method === 'GET' && reply.status === 200 && p.startsWith(`${LIST}?`)) {
              const { items, response_metadata: meta } = JSON.parse(reply.text) as {
                items: unknown[];
                response_metadata: { next_cursor: string | null; prev_cursor: string | null };
              };
              expect(Array.isArray(items)).toBe(true);
              for (const c of [meta.next_cursor, meta.prev_cursor]) {
                if (c === null) continue;
                const next = await send(server.url, 'GET', `${LIST}?cursor=${c}&limit=1`, headers);
                expect(next.status, next.text).toBe(200);
              }
            }
          },
        ),
        params<[string, string, string | undefined, string | Buffer | undefined]>([
          // Found by this property: the router's "Failed to decode param"
          // reached the error middleware as an unknown error and was answered 500.
          ['GET', '/v1/management/api-clients/%zz', undefined, undefined],
          ['DELETE', '/v1/management/api-clients/%e2%80', undefined, undefined],
          // Found by the cursor round-trip: the next page after the 1024-character CJK name was
          // refused (its cursor was longer than decodeCursor allowed).
          ['GET', '/v1/management/api-clients?sort=-name&limit=1', undefined, undefined],
        ]),
      );
    },
    FUZZ_TIMEOUT_MS,
  );
});
