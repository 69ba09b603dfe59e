import pg from 'pg';
import { expect, test } from 'vitest';
import { freshDatabase } from '../support/database.js';

test('the shared PostgreSQL answers in a fresh database', async () => {
  const client = new pg.Client({ connectionString: await freshDatabase() });
  await client.connect();
  const { rows } = await client.query<{ n: number }>('SELECT 1 + 1 AS n');
  await client.end();
  expect(rows[0]?.n).toBe(2);
});
