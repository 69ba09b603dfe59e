import { expect } from 'vitest';
import { h2 } from './h2.js';
import { exchange, type RawTarget } from './raw-tls.js';

// Tricks against a client allowed GET on /resources/json/service/** only
// (docs/decisions/20261128-permissions.md), as raw request lines over TLS (HTTP/1.1) and as
// HTTP/2 :path values: each is refused (400 from Lua or from nginx itself, 403) or reaches only
// an allowed path. Run through the native gateway (test/e2e/permissions.test.ts) and a pair of
// the containers (test/containers/replicas.test.ts), each reading what its engine saw.

export const ALLOWED_PREFIX = '/resources/json/service';
/** The rules every trick is tried against. */
export const READ_SERVICE = [{ methods: ['GET'], path: `${ALLOWED_PREFIX}/**` }];

export type Outcome = 'allowed' | 'ambiguous' | 'denied' | 'nginx';
export const TRICKS: [string, string, Outcome][] = [
  ['a plain allowed path', `${ALLOWED_PREFIX}/about`, 'allowed'],
  [
    'an allowed path with a query that looks like a path',
    `${ALLOWED_PREFIX}/about?x=/../../api`,
    'allowed',
  ],
  ['an allowed path, an unreserved letter encoded', `${ALLOWED_PREFIX}/%61bout`, 'allowed'],
  ['a forbidden path', '/api', 'denied'],
  ['a forbidden path, case changed', '/RESOURCES/json/service/about', 'denied'],
  ['dot-dot out of the subtree', `${ALLOWED_PREFIX}/../../../api`, 'ambiguous'],
  ['a dot segment inside the subtree', `${ALLOWED_PREFIX}/./about`, 'ambiguous'],
  ['encoded dot-dot', `${ALLOWED_PREFIX}/%2e%2e/%2e%2e/%2e%2e/api`, 'ambiguous'],
  ['mixed encoded dot-dot', `${ALLOWED_PREFIX}/.%2E/.%2e/x`, 'ambiguous'],
  ['an encoded slash', `${ALLOWED_PREFIX}/..%2F..%2F..%2Fapi`, 'ambiguous'],
  ['an encoded backslash', `${ALLOWED_PREFIX}/..%5C..%5Capi`, 'ambiguous'],
  ['a raw backslash', `${ALLOWED_PREFIX}/..\\..\\api`, 'ambiguous'],
  ['double encoding', `${ALLOWED_PREFIX}/%252e%252e/api`, 'ambiguous'],
  ['a ; parameter', `${ALLOWED_PREFIX}/about;jsessionid=1`, 'ambiguous'],
  ['..; (Tomcat)', `${ALLOWED_PREFIX}/..;/..;/api`, 'ambiguous'],
  ['a merged slash', `/${ALLOWED_PREFIX}/about`, 'ambiguous'],
  ['an inner empty segment', `${ALLOWED_PREFIX}//about`, 'ambiguous'],
  ['an encoded NUL', `${ALLOWED_PREFIX}/about%00.json`, 'nginx'],
  ['an encoded control byte', `${ALLOWED_PREFIX}/about%0d%0a`, 'ambiguous'],
];
/** HTTP/1.1 only: forms HTTP/2 has no way to say. */
export const H1_TRICKS: [string, string, Outcome][] = [
  ['absolute-form to an allowed path', `https://gw.test${ALLOWED_PREFIX}/about`, 'ambiguous'],
  ['absolute-form to a forbidden path', 'https://gw.test/api', 'ambiguous'],
];

/** The gateway's own refusals; the engine's answers (401 without its session, 404) are not. */
const GATEWAY_CODES = [
  'PERMISSION_DENIED',
  'AMBIGUOUS_PATH',
  'BAD_PATH',
  'BAD_REQUEST',
  'INVALID_API_KEY',
];

/** Passed by the gateway: answered by the engine, whatever the engine said. */
export function expectPassed(res: { status: number; text: string }): void {
  expect(res.status, res.text).not.toBe(403);
  expect(res.status, res.text).not.toBe(400);
  if (res.text.startsWith('{"errors"')) {
    const code = (JSON.parse(res.text) as { errors: { code: string }[] }).errors[0]?.code;
    expect(GATEWAY_CODES).not.toContain(code);
  }
}

/** The answer a trick must get: passed, or the refusal its outcome names, never echoing the path. */
export function expectOutcome(outcome: Outcome, status: number, body: string): void {
  if (outcome === 'allowed') {
    expectPassed({ status, text: body });
    return;
  }
  const code = (JSON.parse(body) as { errors: { code: string }[] }).errors[0]?.code;
  if (outcome === 'denied') expect([status, code]).toEqual([403, 'PERMISSION_DENIED']);
  if (outcome === 'ambiguous') expect([status, code]).toEqual([400, 'AMBIGUOUS_PATH']);
  // nginx refuses these itself before any access code (also for clients without rules).
  if (outcome === 'nginx') expect([status, code]).toEqual([400, 'BAD_REQUEST']);
  // The caller's path is never echoed back.
  expect(body).not.toContain('service');
  expect(body).not.toContain('/api');
}

/** One GET with `requestTarget` exactly as written, over TLS (HTTP/1.1); its request id. */
export async function rawRequest(
  target: RawTarget,
  host: string,
  token: string,
  requestTarget: string,
): Promise<{ status: number; body: string; id: string }> {
  const bytes = Buffer.from(
    `GET ${requestTarget} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: apk ${token}\r\nConnection: close\r\n\r\n`,
    'latin1',
  );
  const answer = await exchange(target, bytes);
  if (answer.kind !== 'http') throw new Error(`no HTTP answer: ${answer.kind}`);
  return {
    status: answer.status,
    body: answer.body,
    id: String(answer.headers['x-request-id'] ?? ''),
  };
}

/** One HTTP/2 GET of `path`, checked against its outcome (a reset stream is a refusal). */
export async function expectH2Outcome(
  target: RawTarget,
  host: string,
  token: string,
  path: string,
  outcome: Outcome,
): Promise<void> {
  const answer = await h2(target, {
    ':method': 'GET',
    ':path': path,
    ':authority': host,
    authorization: `apk ${token}`,
  });
  if (answer.kind !== 'http') {
    // nginx ends the stream on a :path it will not parse: refused, nothing reached the app.
    expect(outcome).not.toBe('allowed');
    return;
  }
  if (outcome === 'nginx' && answer.status === 400) return;
  expectOutcome(outcome, answer.status, answer.body);
}

/** Which of `ids` the engine saw, and the path it saw each at: `allowed` ids only, inside the subtree. */
export function expectEngineSaw(seen: string[], outcome: Outcome): void {
  if (outcome === 'allowed') {
    expect(seen).toHaveLength(1);
    expect(decodeURIComponent(seen[0]!).startsWith(`${ALLOWED_PREFIX}/`)).toBe(true);
  } else {
    expect(seen).toEqual([]);
  }
}

/** The request ids the engine logged in `log` (its JSON lines, behind compose's prefix or not), with the path it saw. */
function engineRequests(log: string): Map<string, string> {
  const seen = new Map<string, string>();
  // Only whole lines: the engine may be writing the last one while the log is read.
  const lines = log.split('\n');
  lines.pop();
  for (const line of lines) {
    if (!line.includes('"engine request"')) continue;
    const entry = JSON.parse(line.slice(line.indexOf('{'))) as {
      request_id?: string;
      path: string;
    };
    if (entry.request_id) seen.set(entry.request_id, entry.path);
  }
  return seen;
}

/**
 * After `ids` were answered: sends one allowed request (`marker`, giving its request id) and
 * waits until the engine's log (`readLog`) has it, so the engine has logged whatever reached it
 * before. Returns the paths the engine saw for `ids`.
 */
export async function reachedEngine(
  ids: string[],
  marker: () => Promise<string>,
  readLog: () => Promise<string>,
): Promise<string[]> {
  const id = await marker();
  const deadline = Date.now() + 10_000;
  let seen = engineRequests(await readLog());
  while (!seen.has(id)) {
    if (Date.now() > deadline) throw new Error('the engine never logged the marker request');
    await new Promise((r) => setTimeout(r, 50));
    seen = engineRequests(await readLog());
  }
  return ids.filter((i) => seen.has(i)).map((i) => seen.get(i)!);
}
