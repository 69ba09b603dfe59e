import { join } from 'node:path';
import pg from 'pg';
import { beforeAll, describe, expect, test } from 'vitest';
import { freshDatabase } from '../../support/database.js';
import { freePort } from '../../support/embedded-postgres.js';
import { http } from '../../support/http.js';
import { type TestProof, testProof } from '../../support/nginx-proof.js';
import { startProcess } from '../../support/process.js';

const MAIN = join(import.meta.dirname, '../../../dist/sidecar/main.js');
let db: string;
let proof: TestProof;

beforeAll(async () => {
  db = await freshDatabase();
  proof = await testProof();
});

/** Runs the built sidecar as operators do, until it listens; returns its stdout and URL. */
async function runSidecar(apiKeyCreate: string | undefined) {
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    DATABASE_URL: db,
    PORT: String(port),
    // Not the default 9464: other suites' sidecars run at the same time.
    METRICS_LISTEN: 'off',
    ...proof.env,
  };
  if (apiKeyCreate !== undefined) env.API_KEY_CREATE = apiKeyCreate;
  const proc = startProcess(process.execPath, [MAIN], env);
  await proc.waitFor(/sidecar listening/);
  return { proc, url: `http://127.0.0.1:${port}` };
}

async function clientCount(): Promise<number> {
  const client = new pg.Client({ connectionString: db });
  await client.connect();
  const { rows } = await client.query('SELECT count(*)::int AS n FROM api_clients');
  await client.end();
  return rows[0].n;
}

const KEY_LINE = /^NEWLY GENERATED API KEY: (\d+\.[A-Za-z0-9_-]{43})$/;

describe('bootstrap key (spec 5.2)', () => {
  test('API_KEY_CREATE=true prints one NEWLY GENERATED API KEY line with a working admin key, on every start', async () => {
    const keys: string[] = [];
    for (let start = 0; start < 2; start += 1) {
      const { proc, url } = await runSidecar('true');
      const lines = proc.stdout().trim().split('\n');
      expect(lines).toHaveLength(1);
      const match = KEY_LINE.exec(lines[0]!);
      expect(match, lines[0]).not.toBeNull();
      const key = match![1]!;
      keys.push(key);
      const res = await http(`${url}/v1/management/api-clients`, {
        headers: { ...proof.header, Authorization: `apk ${key}` },
      });
      expect(res.status).toBe(200);
      expect(proc.stderr()).not.toContain(key.split('.')[1]);
      expect(await proc.stop()).toBe(0);
    }
    expect(keys[0]).not.toBe(keys[1]);
  });

  test.each([undefined, 'false', 'TRUE', 'True', '1', 'yes', ' true', ''])(
    'API_KEY_CREATE=%j prints nothing and creates nothing',
    async (value) => {
      const before = await clientCount();
      const { proc } = await runSidecar(value);
      expect(proc.stdout()).toBe('');
      expect(proc.stderr()).not.toContain('NEWLY GENERATED');
      expect(await proc.stop()).toBe(0);
      expect(await clientCount()).toBe(before);
    },
  );
});
