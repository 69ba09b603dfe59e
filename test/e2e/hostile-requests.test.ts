import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { h2 } from '../support/h2.js';
import { startNativeStack } from '../support/native-stack.js';
import { exchange, type RawTarget } from '../support/raw-tls.js';
import { apk } from '../support/sidecar.js';
import type { Stack } from '../support/stack.js';
import { callStack } from '../support/stack-http.js';
import { ENCODING_ROWS } from './hostile/encoding-rows.js';
import { H2_ROWS } from './hostile/h2-rows.js';
import { HEADER_ROWS } from './hostile/header-rows.js';
import { METHOD_ROWS } from './hostile/method-rows.js';
import { PATH_ROWS } from './hostile/path-rows.js';
import { REQUEST_LINE_ROWS } from './hostile/request-line-rows.js';
import { CLIENTS, KEY_PLACEHOLDER, type Row } from './hostile/row.js';

// Malformed requests written byte for byte over TLS to the real native gateway. Each must get
// the right 4xx (or 501/505) in JSON in the one error shape: never a 500, never HTML, never an
// empty reply.

const ROWS: Row[] = [
  ...REQUEST_LINE_ROWS,
  ...METHOD_ROWS,
  ...PATH_ROWS,
  ...HEADER_ROWS,
  ...ENCODING_ROWS,
];

let stack: Stack;
let target: RawTarget;

beforeAll(async () => {
  stack = await startNativeStack();
  const tls = await stack.tls();
  target = { port: Number(new URL(stack.baseUrl).port), ca: tls.ca, servername: tls.servername };
});
afterAll(async () => {
  await stack?.close();
});

/** The one error shape: `{"errors":[{code, message, field?}, ...]}` and nothing else. */
function expectErrorShape(body: string, code: string): void {
  expect(body).not.toMatch(/<html/i);
  const parsed = JSON.parse(body) as { errors: Array<Record<string, unknown>> };
  expect(Object.keys(parsed)).toEqual(['errors']);
  expect(parsed.errors.length).toBeGreaterThan(0);
  for (const error of parsed.errors) {
    expect(typeof error.code).toBe('string');
    expect(typeof error.message).toBe('string');
    expect(Object.keys(error).every((k) => ['code', 'message', 'field'].includes(k))).toBe(true);
  }
  expect(parsed.errors[0]?.code).toBe(code);
}

test('the table has at least 150 rows, each named once', () => {
  expect(ROWS.length).toBeGreaterThanOrEqual(150);
  expect(new Set(ROWS.map((r) => r.name)).size).toBe(ROWS.length);
});

describe('hostile HTTP/1.x requests over raw TLS', () => {
  test.each(ROWS)('$name → $status $code', async (row) => {
    const bytes = Buffer.from(row.request.replaceAll(KEY_PLACEHOLDER, stack.adminKey), 'latin1');
    const answer = await exchange(target, bytes);
    if (row.http09) {
      expect(answer.kind).toBe('http09');
      if (answer.kind !== 'http09') return;
      expectErrorShape(answer.body, row.code);
      return;
    }
    expect(answer.kind).toBe('http');
    if (answer.kind !== 'http') return;
    expect({ status: answer.status, interim: answer.interim }).toEqual({
      status: row.status,
      interim: row.interim ?? [],
    });
    expect(answer.status).not.toBe(500);
    expect(answer.headers['content-type']).toMatch(/^application\/json(;|$)/);
    if (row.headers) expect(answer.headers).toMatchObject(row.headers);
    expectErrorShape(answer.body, row.code);
  });
});

describe('hostile HTTP/2 requests', () => {
  test.each(H2_ROWS)('$name → $status $code', async (row) => {
    const headers = row.key
      ? { ...row.headers, authorization: `apk ${stack.adminKey}` }
      : row.headers;
    const answer = await h2(target, headers, row.body);
    expect(answer.kind).toBe('http');
    if (answer.kind !== 'http') return;
    expect(answer.status).toBe(row.status);
    expect(answer.contentType).toMatch(/^application\/json(;|$)/);
    expectErrorShape(answer.body, row.code);
  });

  test('a 20 KB header field: nginx ends the session (ENHANCE_YOUR_CALM) rather than answer', async () => {
    // nginx's HPACK reader refuses a field larger than its header buffer as a connection error
    // (RFC 9113 10.5.1 allows it); no configuration turns that into an HTTP answer.
    const answer = await h2(target, {
      ':path': '/api',
      'x-big': 'a'.repeat(20_000),
      authorization: `apk ${stack.adminKey}`,
    });
    expect(answer).toEqual({ kind: 'reset', code: expect.stringMatching(/error code 11\b/) });
  });
});

describe('reserved paths: authentication first, then the path', () => {
  const RESERVED = ['/_auth', '/_auth_admin', '/_gateway/', '/_gateway/errors/404', '/_gateway/x'];

  test('no credential: 401 everywhere; any valid key: the JSON 404; the bare management prefix wants an admin', async () => {
    const created = await callStack(stack, CLIENTS, {
      method: 'POST',
      headers: apk(stack.adminKey),
      json: { name: 'hostile-reserved-user', is_admin: false, generate_api_key: true },
    });
    expect(created.status, created.text).toBe(201);
    const user = (created.json as { token: string }).token;
    for (const path of [...RESERVED, '/v1/management']) {
      const none = await callStack(stack, path);
      expect(none.status, path).toBe(401);
      expectErrorShape(none.text, 'MISSING_CREDENTIALS');
      const admin = await callStack(stack, path, { headers: apk(stack.adminKey) });
      expect(admin.status, path).toBe(404);
      expectErrorShape(admin.text, 'NOT_FOUND');
    }
    // Twice: the second answer comes from a cached decision, and must not differ.
    for (let i = 0; i < 2; i += 1) {
      for (const path of RESERVED) {
        const res = await callStack(stack, path, { headers: apk(user) });
        expect(res.status, path).toBe(404);
        expectErrorShape(res.text, 'NOT_FOUND');
      }
      const bare = await callStack(stack, '/v1/management', { headers: apk(user) });
      expect(bare.status).toBe(403);
      expectErrorShape(bare.text, 'FORBIDDEN');
    }
  });
});

describe('the transport around the request', () => {
  test('plain HTTP to the TLS port: 400 HTTPS_REQUIRED in JSON', async () => {
    const answer = await exchange(
      target,
      Buffer.from('GET /api HTTP/1.1\r\nHost: localhost\r\n\r\n'),
      {
        plain: true,
      },
    );
    expect(answer.kind === 'http' && answer.status).toBe(400);
    if (answer.kind === 'http') expectErrorShape(answer.body, 'HTTPS_REQUIRED');
  });

  test('plain garbage to the TLS port: 400 in JSON', async () => {
    const answer = await exchange(target, Buffer.alloc(300, 0), { plain: true });
    expect(answer.kind === 'http' && answer.status).toBe(400);
    if (answer.kind === 'http') expectErrorShape(answer.body, 'BAD_REQUEST');
  });

  // The two cases answered by closing: the client has closed its side before the request was
  // whole, so there is no request to answer and nobody left to read an answer.
  test('headers cut short, then the client closes its side: closed without an answer', async () => {
    const answer = await exchange(target, Buffer.from('GET /api HTTP/1.1\r\nHost: local'), {
      endAfterWrite: true,
    });
    expect(answer).toEqual({ kind: 'closed' });
  });

  test('a body shorter than its Content-Length, then the client closes: closed without an answer', async () => {
    const request =
      `POST ${CLIENTS} HTTP/1.1\r\nHost: localhost\r\nAuthorization: apk ${stack.adminKey}\r\n` +
      'Content-Type: application/json\r\nContent-Length: 10\r\n\r\n{}';
    const answer = await exchange(target, Buffer.from(request), { endAfterWrite: true });
    expect(answer).toEqual({ kind: 'closed' });
  });
});
