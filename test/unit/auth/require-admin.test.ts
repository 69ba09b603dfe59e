import express from 'express';
import { describe, expect, test } from 'vitest';
import { ApiKeyVerifier } from '../../../sidecar/auth/api-key-verifier.js';
import { Authenticator } from '../../../sidecar/auth/authenticator.js';
import { requireAdmin } from '../../../sidecar/auth/require-admin.js';
import { errorMiddleware } from '../../../sidecar/errors/error-middleware.js';
import type { Logger } from '../../../sidecar/log.js';
import { http } from '../../support/http.js';
import { capturingLogger } from '../../support/sidecar.js';
import { directoryOf, row } from '../support/clients.js';
import { serve } from '../support/serve.js';

const SECRET = 'u'.repeat(43);
const ADMIN = 'a'.repeat(43);
const clients = directoryOf([row(1, { secret: SECRET }), row(2, { secret: ADMIN, isAdmin: true })]);

function app(byId: (id: number) => Promise<ReturnType<typeof row> | null>, log: Logger) {
  const a = express();
  a.use(requireAdmin(new Authenticator(new ApiKeyVerifier({ byId }), null)));
  a.get('/x', (_req, res) => {
    res.json({ identity: res.locals.identity });
  });
  // A route whose own query finds the database gone, after the admin check passed.
  a.get('/lost', () => {
    throw Object.assign(new Error('Connection terminated unexpectedly'), { code: '57P01' });
  });
  a.use(errorMiddleware(log));
  return a;
}

/**
 * The guard in front of a route, on loopback, for one test. Built inside the test, not when the
 * file loads: Stryker counts a file that fails to load as surviving, not as a kill.
 */
async function guarded(
  byId: (id: number) => Promise<ReturnType<typeof row> | null>,
  headers: Record<string, string> = {},
  path = '/x',
  log: Logger = capturingLogger(),
) {
  const server = await serve(app(byId, log));
  try {
    return await http(`${server.url}${path}`, { headers });
  } finally {
    await server.close();
  }
}
const down = async (): Promise<never> => {
  throw new Error('database down');
};

describe('requireAdmin (the management routes check the credential themselves)', () => {
  test('an admin key reaches the route, with its identity', async () => {
    const res = await guarded(clients.byId, { Authorization: `apk 2.${ADMIN}` });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      identity: {
        id: 2,
        clientId: '2',
        clientName: 'client 2',
        isAdmin: true,
        rateLimit: null,
        permissions: null,
      },
    });
  });

  test('a valid non-admin key: 403', async () => {
    const res = await guarded(clients.byId, { Authorization: `apk 1.${SECRET}` });
    expect(res.status).toBe(403);
    expect(res.json).toEqual({
      errors: [{ code: 'FORBIDDEN', message: 'The management API needs an admin credential.' }],
    });
  });

  test('no key: 401 with the challenge', async () => {
    const res = await guarded(clients.byId);
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toBe('apk');
    expect(res.json).toMatchObject({ errors: [{ code: 'MISSING_CREDENTIALS' }] });
  });

  test('a database fault: 503, and the log says why (the caller is told only to retry)', async () => {
    const log = capturingLogger();
    const res = await guarded(
      down,
      { Authorization: `apk 2.${ADMIN}`, 'X-Request-Id': 'f'.repeat(32) },
      '/x',
      log,
    );
    expect(res.status).toBe(503);
    expect(res.json).toMatchObject({ errors: [{ code: 'SERVICE_UNAVAILABLE' }] });
    expect(res.text).not.toContain('database down');
    expect(log.lines.map((l) => JSON.parse(l))).toEqual([
      {
        level: 'error',
        message: 'a management request failed on an infrastructure fault',
        request_id: 'f'.repeat(32),
        method: 'GET',
        path: '/x',
        error: 'database down',
      },
    ]);
  });

  test('the database lost during the route itself: 503 (retryable), not a 500, and logged', async () => {
    const log = capturingLogger();
    const res = await guarded(clients.byId, { Authorization: `apk 2.${ADMIN}` }, '/lost', log);
    expect(res.status).toBe(503);
    expect(res.json).toMatchObject({ errors: [{ code: 'SERVICE_UNAVAILABLE' }] });
    expect(log.lines.map((l) => JSON.parse(l))).toEqual([
      expect.objectContaining({
        level: 'error',
        path: '/lost',
        error: 'Connection terminated unexpectedly',
      }),
    ]);
  });
});
