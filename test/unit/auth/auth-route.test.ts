import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ApiKeyVerifier } from '../../../sidecar/auth/api-key-verifier.js';
import { createAuthDecider, createAuthHandler } from '../../../sidecar/auth/auth-route.js';
import { Authenticator } from '../../../sidecar/auth/authenticator.js';
import type { BearerVerifier } from '../../../sidecar/auth/bearer-verifier.js';
import { SidecarMetrics } from '../../../sidecar/metrics/sidecar-metrics.js';
import { http } from '../../support/http.js';
import { STAND_IN_FOR_NGINX } from '../../support/nginx-stand-in.js';
import { directoryOf, row } from '../support/clients.js';
import { recordingLogger, serve } from '../support/serve.js';

const SECRET = 'u'.repeat(43);
const ADMIN = 'a'.repeat(43);
const clients = directoryOf([
  row(1, { secret: SECRET, name: 'Zoë / ops' }),
  row(2, { secret: ADMIN, isAdmin: true, name: 'root' }),
]);
/** Accepts exactly the token "good": client row 7, valid until a fixed `exp`. */
const VALID_UNTIL = 1_800_000_600;
const bearer: BearerVerifier = {
  async verify(token) {
    if (token !== 'good') {
      return {
        ok: false,
        code: 'INVALID_TOKEN',
        message: 'The bearer token is not valid.',
        scheme: 'bearer',
        jwtError: 'bad',
      };
    }
    return {
      ok: true,
      method: 'bearer',
      validUntil: VALID_UNTIL,
      identity: { id: 7, clientId: 'robot@idp', clientName: 'robot', isAdmin: false },
    };
  },
};
const failing = {
  byId: async (): Promise<never> => {
    throw new Error('connection refused');
  },
};

const { log, lines } = recordingLogger();
let ok: Awaited<ReturnType<typeof serve>>;
let down: Awaited<ReturnType<typeof serve>>;
beforeAll(async () => {
  ok = await serve(
    createAuthHandler(
      new Authenticator(new ApiKeyVerifier(clients), bearer),
      log,
      STAND_IN_FOR_NGINX,
    ),
  );
  down = await serve(
    createAuthHandler(
      new Authenticator(new ApiKeyVerifier(failing), null),
      log,
      STAND_IN_FOR_NGINX,
    ),
  );
});
afterAll(async () => {
  await ok.close();
  await down.close();
});

const ask = (url: string, headers: Record<string, string>) => http(`${url}/auth`, { headers });

describe('/auth', () => {
  test('a valid key: 204 with the identity, percent-encoded, its row, no end, never cached', async () => {
    const res = await ask(ok.url, { Authorization: `apk 1.${SECRET}` });
    expect(res.status).toBe(204);
    expect(res.headers).toMatchObject({
      'x-client-id': '1',
      'x-client-name': 'Zo%C3%AB%20%2F%20ops',
      'x-client-is-admin': 'false',
      'x-auth-method': 'apk',
      'x-gateway-client-row': '1',
      'cache-control': 'no-store',
    });
    // An API key has no expiry of its own: nginx keeps its decision for max_age_ms.
    expect(res.headers['x-gateway-valid-until']).toBeUndefined();
    expect(res.text).toBe('');
  });

  test('the decider behind it (also what auth frames answer): a 204 has no body', async () => {
    const decide = createAuthDecider(
      new Authenticator(new ApiKeyVerifier(clients), bearer),
      log,
      STAND_IN_FOR_NGINX,
    );
    const answer = await decide({
      headers: { authorization: `apk 1.${SECRET}` },
      rawHeaders: ['Authorization', `apk 1.${SECRET}`],
    });
    expect(answer.status).toBe(204);
    expect(answer.body).toBe('');
    expect(answer.headers['X-Client-Id']).toBe('1');
  });

  test("a key's answer follows its client's row: renamed or limited, the next answer says so", async () => {
    const rows = [row(5, { secret: SECRET, name: 'first' })];
    const decide = createAuthDecider(
      new Authenticator(new ApiKeyVerifier(directoryOf(rows)), null),
      log,
      STAND_IN_FOR_NGINX,
    );
    const q = { headers: {}, rawHeaders: ['Authorization', `apk 5.${SECRET}`] };
    const first = await decide(q);
    expect((await decide(q)).headers).toEqual(first.headers);
    expect(first.headers).toMatchObject({ 'X-Client-Name': 'first', 'Cache-Control': 'no-store' });
    // The directory's next row for the client (as a change notice brings): a new object.
    rows[0] = row(5, { secret: SECRET, name: 'second', rateLimit: { requests: 9, perSeconds: 3 } });
    const next = await decide(q);
    expect(next.headers).toMatchObject({ 'X-Client-Name': 'second', 'X-Client-Id': '5' });
    expect(next.headers['X-Gateway-Rate-Limit']).toBe('9 3');
    expect(first.headers['X-Gateway-Rate-Limit']).toBeUndefined();
  });

  test("a key that expires: its yes carries the end, and the next key's yes has none", async () => {
    const ends = new Date('2030-01-01T00:00:00Z');
    const rows = [row(8, { secret: SECRET, expiresAt: ends }), row(9, { secret: SECRET })];
    const decide = createAuthDecider(
      new Authenticator(new ApiKeyVerifier(directoryOf(rows)), null),
      log,
      STAND_IN_FOR_NGINX,
    );
    const ask8 = { headers: {}, rawHeaders: ['Authorization', `apk 8.${SECRET}`] };
    const ask9 = { headers: {}, rawHeaders: ['Authorization', `apk 9.${SECRET}`] };
    for (let i = 0; i < 2; i++) {
      expect((await decide(ask8)).headers['X-Gateway-Valid-Until']).toBe(
        String(ends.getTime() / 1000),
      );
      expect((await decide(ask9)).headers['X-Gateway-Valid-Until']).toBeUndefined();
    }
  });

  test('a token without an end: no valid-until header', async () => {
    const open: BearerVerifier = {
      async verify() {
        return {
          ok: true,
          method: 'bearer',
          identity: { id: 7, clientId: 'robot@idp', clientName: 'robot', isAdmin: false },
        };
      },
    };
    const decide = createAuthDecider(
      new Authenticator(new ApiKeyVerifier(clients), open),
      log,
      STAND_IN_FOR_NGINX,
    );
    const answer = await decide({
      headers: { 'x-gateway-oidc-enabled': 'true' },
      rawHeaders: ['Authorization', 'Bearer any', 'X-Gateway-Oidc-Enabled', 'true'],
    });
    expect(answer.status).toBe(204);
    expect(answer.headers).not.toHaveProperty('X-Gateway-Valid-Until');
    expect(answer.headers['X-Client-Id']).toBe('robot%40idp');
  });

  test('an admin key says so, with its own row', async () => {
    const res = await ask(ok.url, { Authorization: `apk 2.${ADMIN}` });
    expect(res.status).toBe(204);
    expect(res.headers['x-client-is-admin']).toBe('true');
    expect(res.headers['x-gateway-client-row']).toBe('2');
  });

  test("a valid token: 204 with its client's row and valid until its exp", async () => {
    const res = await ask(ok.url, {
      Authorization: 'Bearer good',
      'X-Gateway-Oidc-Enabled': 'true',
    });
    expect(res.status).toBe(204);
    expect(res.headers).toMatchObject({
      'x-client-id': 'robot%40idp',
      'x-client-name': 'robot',
      'x-client-is-admin': 'false',
      'x-auth-method': 'bearer',
      'x-gateway-client-row': '7',
      'x-gateway-valid-until': String(VALID_UNTIL),
      'cache-control': 'no-store',
    });
  });

  test('a refused token: 401 with the JWT error, no row, no end', async () => {
    const res = await ask(ok.url, {
      Authorization: 'Bearer bad',
      'X-Gateway-Oidc-Enabled': 'true',
    });
    expect(res.status).toBe(401);
    expect(res.headers['x-jwt-error']).toBe('bad');
    expect(res.headers['www-authenticate']).toBe('Bearer error="invalid_token"');
    expect(res.headers['x-gateway-client-row']).toBeUndefined();
    expect(res.headers['x-gateway-valid-until']).toBeUndefined();
  });

  test.each([
    ['Bearer ', true, 'missing token'],
    ['bearer    ', true, 'missing token'],
    ['Bearer a b', true, 'malformed Authorization header'],
    ['BEARER', false, 'missing token'],
    ['Bearer good', false, 'bearer tokens are disabled'],
  ])(
    'every refused bearer attempt says why in X-jwt-error: %j (OIDC on: %s)',
    async (value, oidc, jwtError) => {
      const res = await ask(ok.url, {
        Authorization: value,
        'X-Gateway-Oidc-Enabled': String(oidc),
      });
      expect(res.status).toBe(401);
      expect(res.headers['x-jwt-error']).toBe(jwtError);
      expect(res.headers['www-authenticate']).toBe(oidc ? 'Bearer error="invalid_token"' : 'apk');
    },
  );

  test('a refusal: 401 JSON and a challenge, and the key record nginx decides the next ones by', async () => {
    const res = await ask(ok.url, { Authorization: `apk 1.${ADMIN}` });
    expect(res.status).toBe(401);
    const body = { errors: [{ code: 'INVALID_API_KEY', message: 'The API key is not valid.' }] };
    expect(res.json).toEqual(body);
    // The body travels as the body now; the header copy auth_request needed is gone.
    expect(res.headers['x-auth-error-body']).toBeUndefined();
    expect(res.headers).toMatchObject({
      'www-authenticate': 'apk',
      'content-type': 'application/json',
      'cache-control': 'no-store',
    });
    // Never a secret: the SHA-256 PostgreSQL holds, and who the id belongs to.
    expect(res.headers).toMatchObject({
      'x-gateway-key-record': 'known',
      'x-gateway-client-row': '1',
      'x-gateway-key-hash': createHash('sha256').update(SECRET).digest('hex'),
      'x-client-id': '1',
      'x-client-name': 'Zo%C3%AB%20%2F%20ops',
      'x-client-is-admin': 'false',
    });
    expect(JSON.stringify(res.headers)).not.toContain(ADMIN);
    expect(JSON.stringify(res.headers)).not.toContain(SECRET);
    expect(res.headers['x-gateway-previous-key-hash']).toBeUndefined();
    expect(res.headers['x-gateway-expires-at']).toBeUndefined();
  });

  test('an id no client has: 401, remembered by nginx as unknown', async () => {
    const res = await ask(ok.url, { Authorization: `apk 99.${SECRET}` });
    expect(res.status).toBe(401);
    expect(res.headers['x-gateway-key-record']).toBe('unknown');
    expect(res.headers['x-gateway-client-row']).toBe('99');
    expect(res.headers['x-client-id']).toBeUndefined();
    expect(res.headers['x-gateway-key-hash']).toBeUndefined();
  });

  test('a malformed key: no record at all', async () => {
    const res = await ask(ok.url, { Authorization: 'apk 1.short' });
    expect(res.status).toBe(401);
    expect(res.headers['x-gateway-key-record']).toBeUndefined();
    expect(res.headers['x-gateway-client-row']).toBeUndefined();
  });

  describe('on a management path', () => {
    const management = { 'X-Original-URI': '/v1//management/api-clients' };

    test('a valid non-admin key: 403 JSON, no identity, no row', async () => {
      const res = await ask(ok.url, { Authorization: `apk 1.${SECRET}`, ...management });
      expect(res.status).toBe(403);
      const body = {
        errors: [{ code: 'FORBIDDEN', message: 'The management API needs an admin credential.' }],
      };
      expect(res.json).toEqual(body);
      expect(res.headers['x-auth-error-body']).toBeUndefined();
      expect(res.headers['content-type']).toBe('application/json');
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.headers['x-client-id']).toBeUndefined();
      expect(res.headers['x-gateway-client-row']).toBeUndefined();
    });

    test('nginx asking for an admin is enough', async () => {
      const res = await ask(ok.url, {
        Authorization: `apk 1.${SECRET}`,
        'X-Gateway-Require-Admin': 'true',
      });
      expect(res.status).toBe(403);
    });

    test('an admin key passes', async () => {
      const res = await ask(ok.url, { Authorization: `apk 2.${ADMIN}`, ...management });
      expect(res.status).toBe(204);
    });

    test('a bad key there is still 401, not 403', async () => {
      const res = await ask(ok.url, { Authorization: `apk 2.${SECRET}`, ...management });
      expect(res.status).toBe(401);
    });
  });

  test('a database fault fails closed: 503 JSON, logged', async () => {
    lines.length = 0;
    const res = await ask(down.url, { Authorization: `apk 1.${SECRET}` });
    expect(res.status).toBe(503);
    expect(res.json).toEqual({
      errors: [
        {
          code: 'SERVICE_UNAVAILABLE',
          message: 'The gateway cannot reach its database; retry later.',
        },
      ],
    });
    expect(res.headers['x-client-id']).toBeUndefined();
    expect(lines.filter((l) => l.level !== 'debug')).toEqual([
      {
        level: 'error',
        message: 'authentication failed on an infrastructure fault',
        fields: { error: 'connection refused' },
      },
    ]);
  });

  test('a toggle nginx should never send: 500 INTERNAL for everyone, logged', async () => {
    lines.length = 0;
    const res = await ask(ok.url, {
      Authorization: `apk 2.${ADMIN}`,
      'X-Gateway-Api-Keys-Enabled': 'yes',
    });
    expect(res.status).toBe(500);
    expect(res.json).toEqual({ errors: [{ code: 'INTERNAL', message: 'Internal error.' }] });
    expect(res.headers['content-type']).toBe('application/json');
    expect(lines.filter((l) => l.level !== 'debug')).toEqual([
      {
        level: 'error',
        message: 'nginx forwarded an invalid toggle; refusing every request',
        fields: {
          error: 'x-gateway-api-keys-enabled must be "true" or "false", got "yes"',
        },
      },
    ]);
  });
});

describe('/auth reporting', () => {
  test('each answer is counted by method and result and logged (debug) with nginx request id', async () => {
    const metrics = new SidecarMetrics();
    const recorded = recordingLogger();
    const server = await serve(
      createAuthHandler(
        new Authenticator(new ApiKeyVerifier(clients), bearer),
        recorded.log,
        STAND_IN_FOR_NGINX,
        metrics,
      ),
    );
    const id = '0123456789abcdef0123456789abcdef';
    try {
      await ask(server.url, { Authorization: `apk 1.${SECRET}`, 'X-Request-Id': id });
      await ask(server.url, { Authorization: `apk 1.${'x'.repeat(43)}` });
      await ask(server.url, { Authorization: 'Bearer nope', 'X-Request-Id': 'not an id' });
    } finally {
      await server.close();
    }
    const text = await metrics.text();
    expect(text).toContain('gateway_auth_decisions_total{method="apk",result="allowed"} 1');
    expect(text).toContain('gateway_auth_decisions_total{method="apk",result="INVALID_API_KEY"} 1');
    expect(text).toContain(
      'gateway_auth_decisions_total{method="bearer",result="METHOD_DISABLED"} 1',
    );
    expect(text).toContain('gateway_auth_decision_duration_seconds_count{method="apk"} 2');
    expect(text).not.toContain(SECRET);
    const decisions = recorded.lines.filter((l) => l.message === 'auth decision');
    expect(decisions.map((l) => [l.level, l.fields?.request_id, l.fields?.result])).toEqual([
      ['debug', id, 'allowed'],
      // No id, or one of no shape nginx passes on: none logged.
      ['debug', undefined, 'INVALID_API_KEY'],
      ['debug', undefined, 'METHOD_DISABLED'],
    ]);
    expect(JSON.stringify(recorded.lines)).not.toContain(SECRET);
    expect(decisions[0]?.fields).toMatchObject({ method: 'apk', status: 204 });
    expect(decisions[0]?.fields?.duration_ms).toEqual(expect.any(Number));
    expect(decisions[1]?.fields).toMatchObject({ method: 'apk', status: 401 });
    // Seconds in the histogram (two local answers take well under half a second), and the
    // logged milliseconds are the same measurement: one bearer answer, so its sum is its time.
    const sum = (method: string) =>
      Number(
        new RegExp(
          `gateway_auth_decision_duration_seconds_sum\\{method="${method}"\\} (\\S+)`,
        ).exec(text)?.[1],
      );
    expect(sum('apk')).toBeGreaterThan(0);
    expect(sum('apk')).toBeLessThan(0.5);
    // The log rounds to a tenth of a millisecond, and a local answer can take less than half
    // of one: the unrounded histogram sum is the one that must be above zero.
    expect(sum('bearer')).toBeGreaterThan(0);
    expect(decisions[2]?.fields?.duration_ms).toEqual(expect.any(Number));
    expect(
      Math.abs((decisions[2]?.fields?.duration_ms as number) - sum('bearer') * 1000),
    ).toBeLessThanOrEqual(0.05);
  });

  test('a request with no credential at all is counted under the method "none"', async () => {
    const metrics = new SidecarMetrics();
    const server = await serve(
      createAuthHandler(
        new Authenticator(new ApiKeyVerifier(clients), bearer),
        recordingLogger().log,
        STAND_IN_FOR_NGINX,
        metrics,
      ),
    );
    try {
      expect((await ask(server.url, {})).status).toBe(401);
    } finally {
      await server.close();
    }
    expect(await metrics.text()).toMatch(
      /gateway_auth_decisions_total\{method="none",result="[A-Z_]+"\} 1/,
    );
  });

  test('forbidden, unavailable and a bad toggle are counted too, with their status logged', async () => {
    const metrics = new SidecarMetrics();
    const recorded = recordingLogger();
    const up = await serve(
      createAuthHandler(
        new Authenticator(new ApiKeyVerifier(clients), bearer),
        recorded.log,
        STAND_IN_FOR_NGINX,
        metrics,
      ),
    );
    const broken = await serve(
      createAuthHandler(
        new Authenticator(new ApiKeyVerifier(failing), null),
        recorded.log,
        STAND_IN_FOR_NGINX,
        metrics,
      ),
    );
    try {
      const forbidden = await ask(up.url, {
        Authorization: `apk 1.${SECRET}`,
        'X-Gateway-Require-Admin': 'true',
      });
      expect(forbidden.status).toBe(403);
      expect((await ask(broken.url, { Authorization: `apk 1.${SECRET}` })).status).toBe(503);
      const bad = await ask(up.url, {
        Authorization: `apk 1.${SECRET}`,
        'X-Gateway-Api-Keys-Enabled': 'yes',
      });
      expect(bad.status).toBe(500);
    } finally {
      await up.close();
      await broken.close();
    }
    const text = await metrics.text();
    expect(text).toContain('gateway_auth_decisions_total{method="apk",result="forbidden"} 1');
    expect(text).toContain('gateway_auth_decisions_total{method="none",result="unavailable"} 1');
    expect(text).toContain('gateway_auth_decisions_total{method="none",result="error"} 1');
    const statuses = recorded.lines
      .filter((l) => l.message === 'auth decision')
      .map((l) => [l.fields?.result, l.fields?.status]);
    expect(statuses).toEqual([
      ['forbidden', 403],
      ['unavailable', 503],
      ['error', 500],
    ]);
  });
});
