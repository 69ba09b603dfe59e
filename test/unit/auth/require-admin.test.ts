import express from 'express';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ApiKeyVerifier } from '../../../sidecar/auth/api-key-verifier.js';
import { Authenticator } from '../../../sidecar/auth/authenticator.js';
import { errorMiddleware } from '../../../sidecar/errors/error-middleware.js';
import { silentLogger } from '../../../sidecar/log.js';
import { requireAdmin } from '../../../sidecar/management/require-admin.js';
import { http } from '../../support/http.js';
import { directoryOf, row } from '../support/clients.js';
import { serve } from '../support/serve.js';

const SECRET = 'u'.repeat(43);
const ADMIN = 'a'.repeat(43);
const clients = directoryOf([row(1, { secret: SECRET }), row(2, { secret: ADMIN, isAdmin: true })]);

function app(byId: (id: number) => Promise<ReturnType<typeof row> | null>) {
  const a = express();
  a.use(requireAdmin(new Authenticator(new ApiKeyVerifier({ byId }), null)));
  a.get('/x', (_req, res) => {
    res.json({ identity: res.locals.identity });
  });
  a.use(errorMiddleware(silentLogger));
  return a;
}

let up: Awaited<ReturnType<typeof serve>>;
let down: Awaited<ReturnType<typeof serve>>;
beforeAll(async () => {
  up = await serve(app(clients.byId));
  down = await serve(
    app(async () => {
      throw new Error('database down');
    }),
  );
});
afterAll(async () => {
  await up.close();
  await down.close();
});

describe('requireAdmin (the management routes check the credential themselves)', () => {
  test('an admin key reaches the route, with its identity', async () => {
    const res = await http(`${up.url}/x`, { headers: { Authorization: `apk 2.${ADMIN}` } });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      identity: { id: 2, clientId: '2', clientName: 'client 2', isAdmin: true },
    });
  });

  test('a valid non-admin key: 403', async () => {
    const res = await http(`${up.url}/x`, { headers: { Authorization: `apk 1.${SECRET}` } });
    expect(res.status).toBe(403);
    expect(res.json).toEqual({
      errors: [{ code: 'FORBIDDEN', message: 'The management API needs an admin credential.' }],
    });
  });

  test('no key: 401 with the challenge', async () => {
    const res = await http(`${up.url}/x`);
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toBe('apk');
    expect(res.json).toMatchObject({ errors: [{ code: 'MISSING_CREDENTIALS' }] });
  });

  test('a database fault: 503', async () => {
    const res = await http(`${down.url}/x`, { headers: { Authorization: `apk 2.${ADMIN}` } });
    expect(res.status).toBe(503);
    expect(res.json).toMatchObject({ errors: [{ code: 'SERVICE_UNAVAILABLE' }] });
  });
});
