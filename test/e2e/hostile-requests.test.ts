import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Stack } from '../support/stack.js';
import { startNativeStack } from '../support/native-stack.js';
import { ENCODING_ROWS } from './hostile/encoding-rows.js';
import { HEADER_ROWS } from './hostile/header-rows.js';
import { METHOD_ROWS } from './hostile/method-rows.js';
import { PATH_ROWS } from './hostile/path-rows.js';
import { type RawTarget, exchange } from './hostile/raw-tls.js';
import { REQUEST_LINE_ROWS } from './hostile/request-line-rows.js';
import { KEY_PLACEHOLDER, type Row } from './hostile/row.js';

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
    expectErrorShape(answer.body, row.code);
  });
});
