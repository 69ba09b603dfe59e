import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { freshDatabase } from '../../support/database.js';
import { type RunningPostgres, startEmbeddedPostgres } from '../../support/embedded-postgres.js';
import { http } from '../../support/http.js';
import { createClient } from '../../support/management.js';
import { apk, startTestSidecar, type TestSidecar } from '../../support/sidecar.js';

let dir: string;
let postgres: RunningPostgres;
let sidecar: TestSidecar;

// This file stops its database, so it has a PostgreSQL server of its own.
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gw-outage-pg-'));
  postgres = await startEmbeddedPostgres(dir);
  sidecar = await startTestSidecar(await freshDatabase(postgres.adminUrl));
}, 60_000);
afterAll(async () => {
  await sidecar?.close();
  await postgres?.stop().catch(() => {});
  await rm(dir, { recursive: true, force: true });
});

async function until(predicate: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await predicate()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`condition not met within ${timeoutMs} ms`);
}

test('with the database stopped /auth answers 5xx, never 2xx, and recovers by itself', async () => {
  const user = await createClient(sidecar.url, sidecar.adminKey, {
    name: 'outage user',
    is_admin: false,
    generate_api_key: true,
  });
  expect((await http(`${sidecar.url}/auth`, { headers: apk(user.token) })).status).toBe(204);

  await postgres.stop();
  // The cached key too: with the change listener gone nothing cached may be trusted.
  const statuses: number[] = [];
  for (let i = 0; i < 10; i += 1) {
    for (const key of [user.token, sidecar.adminKey]) {
      const res = await http(`${sidecar.url}/auth`, { headers: apk(key) });
      statuses.push(res.status);
      if (res.status >= 500)
        expect(res.json).toEqual({
          errors: [expect.objectContaining({ code: 'SERVICE_UNAVAILABLE' })],
        });
    }
  }
  expect(
    statuses.every((s) => s >= 500 && s < 600),
    statuses.join(','),
  ).toBe(true);
  const management = await http(`${sidecar.url}/v1/management/api-clients`, {
    headers: apk(sidecar.adminKey),
  });
  expect(management.status).toBe(503);
  expect((await http(`${sidecar.url}/healthz`)).status).toBe(503);

  await postgres.start();
  await until(
    async () => (await http(`${sidecar.url}/auth`, { headers: apk(user.token) })).status === 204,
    20_000,
  );
  const list = await http(`${sidecar.url}/v1/management/api-clients`, {
    headers: apk(sidecar.adminKey),
  });
  expect(list.status).toBe(200);
  expect((await http(`${sidecar.url}/healthz`)).status).toBe(200);
}, 60_000);
