import type { IncomingMessage } from 'node:http';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  formatVersion,
  parseVersion,
  type RunningEngine,
  startEngine,
} from '../../engine/index.js';
import { readSessionCookies, SESSION_COOKIE } from '../../engine/sessions/cookie.js';
import { anyJson, anyText, FUZZ_TIMEOUT_MS, params } from './runs.js';
import { type Reply, send } from './support/keep-alive.js';

const PASSWORD = 'correct horse battery staple';
const cookieOf = (header: string | undefined) =>
  readSessionCookies({ headers: { cookie: header } } as IncomingMessage);
const COOKIE_OCTET = fc.constantFrom(..."abcXYZ019!#$%&'()*+-./:<=>?@[]^_`{|}~".split(''));

describe('engine inputs', () => {
  test(
    'the session cookie is found among any other cookies, whatever they hold',
    () => {
      const other = fc
        .tuple(anyText(10), anyText(20))
        .filter(([n]) => n.trim() !== SESSION_COOKIE && !n.includes('=') && !n.includes(';'));
      fc.assert(
        fc.property(
          fc.array(
            other.map(([n, v]) => `${n}=${v.replaceAll(';', '')}`),
            { maxLength: 4 },
          ),
          fc.string({ unit: COOKIE_OCTET, maxLength: 40 }),
          fc.array(
            other.map(([n, v]) => `${n}=${v.replaceAll(';', '')}`),
            { maxLength: 4 },
          ),
          (before, id, after) => {
            const header = [...before, `${SESSION_COOKIE}=${id}`, ...after].join('; ');
            expect(cookieOf(header)).toEqual([id]);
          },
        ),
        params(),
      );
    },
    FUZZ_TIMEOUT_MS,
  );

  test(
    'any Cookie header: never throws; values only when the header names the cookie',
    () => {
      fc.assert(
        fc.property(fc.oneof(anyText(80), fc.constant(undefined)), (header) => {
          for (const found of cookieOf(header)) {
            expect(header).toContain(`=${found}`);
            expect(header).toContain(SESSION_COOKIE);
          }
        }),
        params(),
      );
    },
    FUZZ_TIMEOUT_MS,
  );

  test(
    'versions round-trip, and only M.m.u text parses',
    () => {
      const part = fc.integer({ min: 0, max: 999_999 });
      fc.assert(
        fc.property(part, part, part, anyText(20), (major, minor, micro, text) => {
          expect(parseVersion(formatVersion({ major, minor, micro }))).toEqual({
            major,
            minor,
            micro,
          });
          const parsed = parseVersion(text);
          if (parsed !== undefined) expect(text.trim()).toMatch(/^\d{1,6}\.\d{1,6}\.\d{1,6}$/);
        }),
        params(),
      );
    },
    FUZZ_TIMEOUT_MS,
  );
});

describe('engine HTTP', () => {
  let engine: RunningEngine;
  let loggedIn: string;
  const unexpected: string[] = [];

  beforeAll(async () => {
    engine = await startEngine({ adminPassword: PASSWORD, log: (line) => unexpected.push(line) });
    const opened = await send(
      engine.url,
      'POST',
      '/resources/json/service/session',
      { 'Content-Type': 'application/json' },
      JSON.stringify({
        type: 'APISession',
        version: { type: 'APIVersion', major: 2, minor: 1, micro: 0 },
      }),
    );
    const login = await send(
      engine.url,
      'POST',
      '/resources/json/service/login',
      { 'Content-Type': 'application/json', Cookie: cookie(opened) },
      JSON.stringify({ type: 'LoginRequest', username: engine.adminUser, password: PASSWORD }),
    );
    loggedIn = cookie(login);
  });
  afterAll(() => engine.close());

  function cookie(reply: Reply): string {
    const set = [reply.headers['set-cookie'] ?? []]
      .flat()
      .find((c) => c.startsWith(`${SESSION_COOKIE}=`));
    if (!set) throw new Error(`no session cookie: ${reply.status} ${reply.text}`);
    return set.split(';', 1)[0]!;
  }

  const version = fc.record(
    {
      type: fc.oneof(fc.constant('APIVersion'), anyJson),
      major: fc.oneof(fc.integer({ min: -1, max: 3 }), anyJson),
      minor: fc.oneof(fc.nat(3), anyJson),
      micro: fc.oneof(fc.nat(3), anyJson),
    },
    { requiredKeys: [] },
  );
  const record = fc.oneof(
    anyJson,
    fc.record(
      {
        type: fc.oneof(fc.constant('APISession'), anyJson),
        version: fc.oneof(version, anyJson),
        locale: anyJson,
        client: anyJson,
      },
      { requiredKeys: [] },
    ),
    fc.record(
      {
        type: fc.oneof(fc.constant('LoginRequest'), anyJson),
        username: fc.oneof(fc.constant('admin'), anyJson),
        password: anyJson,
        target: anyJson,
      },
      { requiredKeys: [] },
    ),
    fc.record(
      {
        type: fc.oneof(fc.constant('User'), anyJson),
        name: anyJson,
        password: anyJson,
        enabled: anyJson,
      },
      { requiredKeys: [] },
    ),
  );
  const path = fc
    .tuple(
      fc.constantFrom(
        '/resources/json/service/session',
        '/resources/json/service/login',
        '/resources/json/service/logout',
        '/resources/json/service/whoami',
        '/resources/json/users',
        '/resources/json/users/',
        '/api',
        '/',
      ),
      fc.oneof(
        fc.constant(''),
        fc
          .array(
            fc.constantFrom(
              'USER-1',
              '1',
              '%zz',
              '%00',
              '/delete',
              '/',
              '..',
              '?',
              'a=b',
              '&',
              'type=x',
              'pageSize=-1',
              '%E2%80%AE',
            ),
            { maxLength: 4 },
          )
          .map((p) => p.join('')),
      ),
    )
    .map(([a, b]) => a + b);

  test(
    'no request gets a 5xx, and every error is an ErrorResult',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom('GET', 'POST', 'DELETE', 'PUT', 'PATCH'),
          path,
          fc.constantFrom(
            undefined,
            'application/json',
            'application/vnd.x+json',
            'text/plain',
            'application/json; charset=utf-16',
          ),
          fc.oneof(
            fc.constant(undefined),
            record.map((r) => JSON.stringify(r)),
            fc.string({ unit: 'binary', maxLength: 60 }),
          ),
          fc.oneof(
            fc.constant(undefined),
            fc.constant('LOGGED_IN'),
            fc.string({ unit: COOKIE_OCTET, maxLength: 40 }).map((v) => `${SESSION_COOKIE}=${v}`),
          ),
          async (method, p, type, body, session) => {
            const headers: Record<string, string> = {};
            if (type !== undefined) headers['Content-Type'] = type;
            if (session !== undefined)
              headers.Cookie = session === 'LOGGED_IN' ? loggedIn : session;
            const reply = await send(engine.url, method, p, headers, body);
            expect(reply.status).toBeLessThan(500);
            if (reply.status >= 400) {
              expect(JSON.parse(reply.text)).toMatchObject({
                type: 'ErrorResult',
                status: 'ERROR',
                error: { type: 'APIError', id: expect.any(String), details: expect.any(String) },
              });
            }
          },
        ),
        params(),
      );
      expect(unexpected).toEqual([]);
    },
    FUZZ_TIMEOUT_MS,
  );
});
