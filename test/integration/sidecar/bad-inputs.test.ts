import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { freshDatabase } from '../../support/database.js';
import { type HttpOptions, http } from '../../support/http.js';
import { CLIENTS, createClient } from '../../support/management.js';
import { apk, startTestSidecar, type TestSidecar } from '../../support/sidecar.js';

let sidecar: TestSidecar;
let userKey: string;

beforeAll(async () => {
  sidecar = await startTestSidecar(await freshDatabase());
  userKey = (
    await createClient(sidecar.url, sidecar.adminKey, {
      name: 'existing',
      is_admin: false,
      generate_api_key: true,
    })
  ).token;
});
afterAll(() => sidecar?.close());

interface BadInput {
  what: string;
  path: string | (() => string);
  options: () => HttpOptions;
  status: number;
  code: string;
  field?: string;
}

const admin = () => apk(sidecar.adminKey);
const post = (json: unknown) => () => ({ method: 'POST', headers: admin(), json });
const postRaw =
  (body: string | Buffer, type = 'application/json') =>
  () => ({
    method: 'POST',
    headers: { ...admin(), 'Content-Type': type },
    body,
  });
const valid = { name: 'n', is_admin: false, generate_api_key: true };
const withName = (name: unknown) => post({ ...valid, name });
const get =
  (headers: () => Record<string, string> = admin) =>
  () => ({ headers: headers() });
const del = () => ({ method: 'DELETE', headers: admin() });

// Every row: the documented 4xx and the JSON error shape; never a 500.
const table: BadInput[] = [
  // Body shape
  {
    what: 'body not JSON',
    path: CLIENTS,
    options: postRaw('{name:'),
    status: 400,
    code: 'INVALID_JSON',
  },
  { what: 'empty body', path: CLIENTS, options: postRaw(''), status: 400, code: 'INVALID_BODY' },
  {
    what: 'body a JSON array',
    path: CLIENTS,
    options: post([valid]),
    status: 400,
    code: 'INVALID_BODY',
  },
  {
    what: 'body a JSON string',
    path: CLIENTS,
    options: post('name'),
    status: 400,
    code: 'INVALID_BODY',
  },
  {
    what: 'body JSON null',
    path: CLIENTS,
    options: postRaw('null'),
    status: 400,
    code: 'INVALID_BODY',
  },
  {
    what: 'text/plain body',
    path: CLIENTS,
    options: postRaw(JSON.stringify(valid), 'text/plain'),
    status: 415,
    code: 'UNSUPPORTED_MEDIA_TYPE',
  },
  {
    what: 'form body',
    path: CLIENTS,
    options: postRaw('name=n', 'application/x-www-form-urlencoded'),
    status: 415,
    code: 'UNSUPPORTED_MEDIA_TYPE',
  },
  {
    what: 'no Content-Type',
    path: CLIENTS,
    options: () => ({ method: 'POST', headers: admin(), body: JSON.stringify(valid) }),
    status: 415,
    code: 'UNSUPPORTED_MEDIA_TYPE',
  },
  {
    what: 'unsupported charset',
    path: CLIENTS,
    options: postRaw(JSON.stringify(valid), 'application/json; charset=ebcdic'),
    status: 415,
    code: 'UNSUPPORTED_MEDIA_TYPE',
  },
  {
    what: 'a charset other than UTF-8 that body-parser could decode',
    path: CLIENTS,
    options: postRaw(JSON.stringify(valid), 'application/json; charset=utf-16'),
    status: 415,
    code: 'UNSUPPORTED_MEDIA_TYPE',
  },
  {
    what: 'bytes that are not UTF-8 (never stored as U+FFFD)',
    path: CLIENTS,
    options: postRaw(
      Buffer.from('{"name":"caf\xe9","is_admin":false,"generate_api_key":true}', 'latin1'),
    ),
    status: 400,
    code: 'INVALID_JSON',
  },
  {
    what: 'gzip declared, the body not gzip',
    path: CLIENTS,
    options: () => ({
      method: 'POST',
      headers: { ...admin(), 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' },
      body: JSON.stringify(valid),
    }),
    status: 400,
    code: 'INVALID_CONTENT_ENCODING',
  },
  {
    what: 'body over 64 KiB',
    path: CLIENTS,
    options: post({ ...valid, name: 'x'.repeat(70_000) }),
    status: 413,
    code: 'PAYLOAD_TOO_LARGE',
  },
  // Fields
  {
    what: 'missing name',
    path: CLIENTS,
    options: post({ is_admin: false, generate_api_key: true }),
    status: 400,
    code: 'MISSING_FIELD',
    field: 'name',
  },
  {
    what: 'missing is_admin',
    path: CLIENTS,
    options: post({ name: 'a', generate_api_key: true }),
    status: 400,
    code: 'MISSING_FIELD',
    field: 'is_admin',
  },
  {
    what: 'missing generate_api_key',
    path: CLIENTS,
    options: post({ name: 'a', is_admin: true }),
    status: 400,
    code: 'MISSING_FIELD',
    field: 'generate_api_key',
  },
  {
    what: 'name a number',
    path: CLIENTS,
    options: withName(42),
    status: 400,
    code: 'INVALID_FIELD',
    field: 'name',
  },
  {
    what: 'name null',
    path: CLIENTS,
    options: withName(null),
    status: 400,
    code: 'INVALID_FIELD',
    field: 'name',
  },
  {
    what: 'name an object',
    path: CLIENTS,
    options: withName({ first: 'a' }),
    status: 400,
    code: 'INVALID_FIELD',
    field: 'name',
  },
  {
    what: 'empty name',
    path: CLIENTS,
    options: withName(''),
    status: 400,
    code: 'INVALID_FIELD',
    field: 'name',
  },
  {
    what: 'whitespace-only name',
    path: CLIENTS,
    options: withName('   '),
    status: 400,
    code: 'INVALID_FIELD',
    field: 'name',
  },
  {
    what: 'huge name (1025 chars)',
    path: CLIENTS,
    options: withName('n'.repeat(1025)),
    status: 400,
    code: 'INVALID_FIELD',
    field: 'name',
  },
  {
    what: 'name with a NUL byte',
    path: CLIENTS,
    options: withName('a\u0000b'),
    status: 400,
    code: 'INVALID_FIELD',
    field: 'name',
  },
  {
    what: 'name with a newline',
    path: CLIENTS,
    options: withName('a\nb'),
    status: 400,
    code: 'INVALID_FIELD',
    field: 'name',
  },
  {
    what: 'name with a bidi override',
    path: CLIENTS,
    options: withName('admin\u202egnp.exe'),
    status: 400,
    code: 'INVALID_FIELD',
    field: 'name',
  },
  {
    what: 'name with an unpaired surrogate',
    path: CLIENTS,
    options: postRaw('{"name":"a\\ud800","is_admin":false,"generate_api_key":true}'),
    status: 400,
    code: 'INVALID_FIELD',
    field: 'name',
  },
  {
    what: 'SQL-looking duplicate name',
    path: CLIENTS,
    options: withName("existing' OR '1'='1"),
    status: 201,
    code: '',
  },
  {
    what: 'is_admin a string',
    path: CLIENTS,
    options: post({ ...valid, is_admin: 'true' }),
    status: 400,
    code: 'INVALID_FIELD',
    field: 'is_admin',
  },
  {
    what: 'is_admin a number',
    path: CLIENTS,
    options: post({ ...valid, is_admin: 1 }),
    status: 400,
    code: 'INVALID_FIELD',
    field: 'is_admin',
  },
  {
    what: 'generate_api_key null',
    path: CLIENTS,
    options: post({ ...valid, generate_api_key: null }),
    status: 400,
    code: 'INVALID_FIELD',
    field: 'generate_api_key',
  },
  {
    what: 'api_client_id missing for a token client',
    path: CLIENTS,
    options: post({ ...valid, generate_api_key: false }),
    status: 400,
    code: 'MISSING_FIELD',
    field: 'api_client_id',
  },
  {
    what: 'api_client_id a number',
    path: CLIENTS,
    options: post({ ...valid, api_client_id: 7 }),
    status: 400,
    code: 'INVALID_FIELD',
    field: 'api_client_id',
  },
  {
    what: 'api_client_id empty',
    path: CLIENTS,
    options: post({ ...valid, generate_api_key: false, api_client_id: '' }),
    status: 400,
    code: 'INVALID_FIELD',
    field: 'api_client_id',
  },
  {
    what: 'api_client_id huge',
    path: CLIENTS,
    options: post({ ...valid, api_client_id: 's'.repeat(1025) }),
    status: 400,
    code: 'INVALID_FIELD',
    field: 'api_client_id',
  },
  {
    what: 'unknown field',
    path: CLIENTS,
    options: post({ ...valid, role: 'root' }),
    status: 400,
    code: 'UNKNOWN_FIELD',
    field: 'role',
  },
  {
    what: 'prototype-looking field',
    path: CLIENTS,
    options: postRaw(
      '{"name":"p","is_admin":false,"generate_api_key":true,"__proto__":{"is_admin":true}}',
    ),
    status: 400,
    code: 'UNKNOWN_FIELD',
    field: '__proto__',
  },
  // Ids
  {
    what: 'id negative',
    path: `${CLIENTS}/-1`,
    options: get(),
    status: 400,
    code: 'INVALID_ID',
    field: 'id',
  },
  {
    what: 'id zero',
    path: `${CLIENTS}/0`,
    options: get(),
    status: 400,
    code: 'INVALID_ID',
    field: 'id',
  },
  {
    what: 'id huge',
    path: `${CLIENTS}/99999999999999999999999`,
    options: get(),
    status: 400,
    code: 'INVALID_ID',
    field: 'id',
  },
  {
    what: 'id non-numeric',
    path: `${CLIENTS}/abc`,
    options: get(),
    status: 400,
    code: 'INVALID_ID',
    field: 'id',
  },
  {
    what: 'id with leading zero',
    path: `${CLIENTS}/01`,
    options: get(),
    status: 400,
    code: 'INVALID_ID',
    field: 'id',
  },
  {
    what: 'id decimal',
    path: `${CLIENTS}/1.5`,
    options: get(),
    status: 400,
    code: 'INVALID_ID',
    field: 'id',
  },
  {
    what: 'id SQL-looking',
    path: `${CLIENTS}/1%20OR%201=1`,
    options: get(),
    status: 400,
    code: 'INVALID_ID',
    field: 'id',
  },
  {
    what: 'DELETE id non-numeric',
    path: `${CLIENTS}/abc`,
    options: del,
    status: 400,
    code: 'INVALID_ID',
    field: 'id',
  },
  {
    what: 'DELETE id absent',
    path: `${CLIENTS}/987654`,
    options: del,
    status: 404,
    code: 'NOT_FOUND',
  },
  // Query
  {
    what: 'limit zero',
    path: `${CLIENTS}?limit=0`,
    options: get(),
    status: 400,
    code: 'INVALID_FIELD',
    field: 'limit',
  },
  {
    what: 'limit 1001',
    path: `${CLIENTS}?limit=1001`,
    options: get(),
    status: 400,
    code: 'INVALID_FIELD',
    field: 'limit',
  },
  {
    what: 'limit non-numeric',
    path: `${CLIENTS}?limit=ten`,
    options: get(),
    status: 400,
    code: 'INVALID_FIELD',
    field: 'limit',
  },
  {
    what: 'limit repeated',
    path: `${CLIENTS}?limit=1&limit=2`,
    options: get(),
    status: 400,
    code: 'INVALID_FIELD',
    field: 'limit',
  },
  {
    what: 'cursor garbage',
    path: `${CLIENTS}?cursor=%27%3B--`,
    options: get(),
    status: 400,
    code: 'INVALID_FIELD',
    field: 'cursor',
  },
  {
    what: 'unknown query parameter',
    path: `${CLIENTS}?order=name`,
    options: get(),
    status: 400,
    code: 'UNKNOWN_FIELD',
    field: 'order',
  },
  // Keys
  {
    what: 'key without a dot',
    path: CLIENTS,
    options: get(() => apk('12345')),
    status: 401,
    code: 'MALFORMED_CREDENTIALS',
  },
  {
    what: 'key with an empty secret',
    path: CLIENTS,
    options: get(() => apk('1.')),
    status: 401,
    code: 'MALFORMED_CREDENTIALS',
  },
  {
    what: 'key with an empty id',
    path: CLIENTS,
    options: get(() => apk(`.${'a'.repeat(43)}`)),
    status: 401,
    code: 'MALFORMED_CREDENTIALS',
  },
  {
    what: 'key with a leading-zero id',
    path: CLIENTS,
    options: get(() => apk(`01.${'a'.repeat(43)}`)),
    status: 401,
    code: 'MALFORMED_CREDENTIALS',
  },
  {
    what: 'key with a negative id',
    path: CLIENTS,
    options: get(() => apk(`-1.${'a'.repeat(43)}`)),
    status: 401,
    code: 'MALFORMED_CREDENTIALS',
  },
  {
    what: 'key with a huge id',
    path: CLIENTS,
    options: get(() => apk(`99999999999999999999.${'a'.repeat(43)}`)),
    status: 401,
    code: 'MALFORMED_CREDENTIALS',
  },
  {
    what: 'key with whitespace inside',
    path: CLIENTS,
    options: get(() => ({ Authorization: `apk ${userKey.slice(0, 5)} ${userKey.slice(5)}` })),
    status: 401,
    code: 'MALFORMED_CREDENTIALS',
  },
  {
    what: 'key with a short secret',
    path: CLIENTS,
    options: get(() => apk(`${userKey.slice(0, -1)}`)),
    status: 401,
    code: 'MALFORMED_CREDENTIALS',
  },
  {
    what: 'key with a non-base64url secret',
    path: CLIENTS,
    options: get(() => apk(`1.${'+'.repeat(43)}`)),
    status: 401,
    code: 'MALFORMED_CREDENTIALS',
  },
  {
    what: 'scheme without a key',
    path: CLIENTS,
    options: get(() => ({ Authorization: 'apk' })),
    status: 401,
    code: 'MALFORMED_CREDENTIALS',
  },
  {
    what: 'a 10 KB Authorization header',
    path: CLIENTS,
    options: get(() => apk(`1.${'a'.repeat(10_240)}`)),
    status: 401,
    code: 'MALFORMED_CREDENTIALS',
  },
  {
    what: 'SQL in the key',
    path: CLIENTS,
    options: get(() => apk("1' OR '1'='1")),
    status: 401,
    code: 'MALFORMED_CREDENTIALS',
  },
  {
    what: 'unicode in the key',
    path: CLIENTS,
    options: get(() => ({
      Authorization: Buffer.from(`apk 1.${'é'.repeat(43)}`, 'utf8').toString('latin1'),
    })),
    status: 401,
    code: 'MALFORMED_CREDENTIALS',
  },
];

describe('bad inputs get the documented 4xx and the JSON error, never a 500', () => {
  test('the table holds at least 40 bad inputs', () => {
    expect(table.filter((row) => row.status >= 400).length).toBeGreaterThanOrEqual(40);
  });

  test.each(table.map((row) => [row.what, row] as const))('%s', async (_what, row) => {
    const path = typeof row.path === 'function' ? row.path() : row.path;
    const res = await http(`${sidecar.url}${path}`, row.options());
    expect(res.status, res.text).toBe(row.status);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    if (row.status >= 400) {
      const errors = (res.json as { errors: { code: string; field?: string; message: string }[] })
        .errors;
      expect(errors.length).toBeGreaterThan(0);
      expect(errors).toContainEqual(
        expect.objectContaining({ code: row.code, ...(row.field ? { field: row.field } : {}) }),
      );
      for (const e of errors)
        expect(e.message).not.toMatch(/at .*\.(ts|js):\d|postgres|SELECT|INSERT/i);
    }
  });
});

describe("what the sidecar's HTTP parser refuses is JSON too", () => {
  /** Raw bytes to the sidecar, the whole answer back. */
  async function raw(bytes: string): Promise<string> {
    const { connect } = await import('node:net');
    const url = new URL(sidecar.url);
    return new Promise((resolve, reject) => {
      const socket = connect(Number(url.port), url.hostname, () => socket.end(bytes, 'latin1'));
      let answer = '';
      socket.on('data', (chunk) => {
        answer += chunk.toString('latin1');
      });
      socket.on('end', () => resolve(answer));
      socket.on('error', reject);
    });
  }

  test.each([
    ['an unknown method', 'FOO@ / HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['raw UTF-8 in the path', 'GET /v1/management/caf\xc3\xa9 HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['a control byte in a header value', 'GET /auth HTTP/1.1\r\nHost: x\r\nX-A: a\x01b\r\n\r\n'],
    ['a broken request line', 'GET\r\n\r\n'],
  ])('%s: 400 with the one error shape, never an empty reply', async (_, bytes) => {
    const answer = await raw(bytes);
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(answer).toMatch(/\r\nContent-Type: application\/json\r\n/);
    const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));
    expect(body).toEqual({ errors: [{ code: 'BAD_REQUEST', message: expect.any(String) }] });
  });
});
