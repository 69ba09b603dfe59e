import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { OIDC_DEFAULTS } from '../../../sidecar/oidc/settings.js';
import { freshDatabase } from '../../support/database.js';
import { type OidcSetup, startOidcSetup } from '../../support/oidc-setup.js';
import { type OidcTestSidecar, startOidcSidecar } from '../../support/oidc-sidecar.js';
import { claimsOf } from '../../support/oidc-tokens.js';

// exp, nbf and iat against the sidecar's clock, which the tests move instead of sleeping.
let setup: OidcSetup;
let strict: OidcTestSidecar;
const leeway = OIDC_DEFAULTS.clockToleranceSeconds;

beforeAll(async () => {
  const databaseUrl = await freshDatabase();
  setup = await startOidcSetup(databaseUrl, ['svc-time']);
  strict = await startOidcSidecar(databaseUrl, {
    OIDC_CA_FILE: setup.caFile,
    OIDC_CLOCK_TOLERANCE_SECONDS: '0',
  });
  await setup.addClient('svc-time');
});
afterAll(async () => {
  await strict?.close();
  await setup?.close();
});

/** Moves `sidecar`'s clock so that it reads `targetSeconds` (plus the time the test takes). */
function setClock(sidecar: OidcTestSidecar, targetSeconds: number): void {
  sidecar.clock.advance(targetSeconds * 1000 - sidecar.clock.now());
}

describe('with the default leeway', () => {
  test('a provider-issued token expires when its exp (plus leeway) has passed', async () => {
    const token = await setup.provider.issueToken('svc-time');
    const { exp } = claimsOf(token) as { exp: number };
    expect((await setup.auth(token)).status).toBe(204);
    setClock(setup.sidecar, exp + leeway - 5);
    expect((await setup.auth(token)).status).toBe(204);
    setClock(setup.sidecar, exp + leeway + 5);
    const res = await setup.auth(token);
    expect(res.status).toBe(401);
    expect(res.headers['x-jwt-error']).toBe('token expired');
    setClock(setup.sidecar, Date.now() / 1000);
  });

  test.each([
    ['exp', -(leeway - 10), 204],
    ['exp', -(leeway + 10), 401],
    ['nbf', leeway - 10, 204],
    ['nbf', leeway + 10, 401],
    ['iat', leeway - 10, 204],
    ['iat', leeway + 10, 401],
  ])('hand-signed %s %is from now: %i', async (claim, offset, status) => {
    const t = Math.floor(setup.sidecar.clock.now() / 1000);
    const token = await setup.provider.sign({
      sub: 'svc-time',
      iat: t,
      exp: t + 600,
      [claim]: t + offset,
    });
    expect((await setup.auth(token)).status).toBe(status);
  });
});

test('OIDC_CLOCK_TOLERANCE_SECONDS=0: no leeway at all', async () => {
  const t = Math.floor(strict.clock.now() / 1000);
  const justExpired = await setup.provider.sign({ sub: 'svc-time', exp: t - 2 });
  const res = await setup.auth(justExpired, {}, strict);
  expect(res.headers['x-jwt-error']).toBe('token expired');
  const justStarting = await setup.provider.sign({ sub: 'svc-time', nbf: t + 3 });
  expect((await setup.auth(justStarting, {}, strict)).headers['x-jwt-error']).toBe(
    'token not yet valid',
  );
  const valid = await setup.provider.sign({ sub: 'svc-time', exp: t + 60 });
  expect((await setup.auth(valid, {}, strict)).status).toBe(204);
});
