import { createHash } from 'node:crypto';
import pg from 'pg';
import { describe, expect, test } from 'vitest';
import { parseDistinctKeys } from '../../bench/scale/distinct-keys.js';
import { insertKeyedClients, keyCredential, keySecret } from '../../bench/stack/distinct-keys.js';
import { migrate } from '../../sidecar/db/migrate.js';
import { createPool } from '../../sidecar/db/pool.js';
import { hashSecret, parseApiKey } from '../../sidecar/keys/api-key.js';
import { silentLogger } from '../../sidecar/log.js';
import { freshDatabase } from '../support/database.js';

describe('distinct keys made by SQL', () => {
  test('a secret is 43 characters of base64url, a key the sidecar parses', () => {
    const secret = keySecret('ab12cd34', 7);
    expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(secret).toBe(createHash('sha256').update('ab12cd34:7').digest('base64url'));
    const credential = keyCredential('ab12cd34', 7);
    expect(credential).toBe(`apk 7.${secret}`);
    expect(parseApiKey(credential.slice(4))).toEqual({ ok: true, id: 7, secret });
  });

  test('PostgreSQL stores the hash of the secret the bench derives for each row id', async () => {
    const url = await freshDatabase();
    const pool = createPool(url, silentLogger);
    try {
      await migrate(pool, silentLogger);
    } finally {
      await pool.end();
    }
    const first = await insertKeyedClients(url, 50);
    const both = await insertKeyedClients(url, 30, first);
    expect(both.tag).toBe(first.tag);
    expect(both.ids).toHaveLength(80);
    expect(new Set(both.ids).size).toBe(80);
    const db = new pg.Client({ connectionString: url });
    await db.connect();
    try {
      const { rows } = await db.query<{ id: string; key_hash: Buffer; is_admin: boolean }>(
        'SELECT id::text, key_hash, is_admin FROM api_clients ORDER BY api_clients.id',
      );
      expect(rows.map((r) => Number(r.id))).toEqual(both.ids);
      for (const row of rows) {
        expect(row.is_admin).toBe(false);
        expect(row.key_hash.equals(hashSecret(keySecret(both.tag, Number(row.id))))).toBe(true);
      }
    } finally {
      await db.end();
    }
  });
});

describe('bench:scale options of the distinct-keys row', () => {
  test('10^6 keys and 192m by default; 0 skips the row; sizes as the settings write them', () => {
    expect(parseDistinctKeys([])).toEqual({ keys: 1_000_000, keyTableSize: '192m' });
    expect(parseDistinctKeys(['--distinct-keys', '0'])).toEqual({ keys: 0, keyTableSize: '192m' });
    expect(parseDistinctKeys(['--distinct-keys', '20000', '--key-table-size', '64m'])).toEqual({
      keys: 20_000,
      keyTableSize: '64m',
    });
    expect(() => parseDistinctKeys(['--distinct-keys', 'many'])).toThrow(/--distinct-keys/);
    expect(() => parseDistinctKeys(['--key-table-size', '1g'])).toThrow(/--key-table-size/);
  });
});
