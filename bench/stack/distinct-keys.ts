import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import pg from 'pg';

/**
 * Many API clients with keys the bench can present (issue 38's distinct-key rows), made by SQL
 * in one statement as bench/stack/fill-clients.ts makes its rows: no API call per client. A
 * client's secret is derived from a run tag and its row id, the same way in PostgreSQL and here
 * (`keySecret`), so nothing but the id range comes back from the database and no secret is
 * stored (only its SHA-256, as for any key).
 */

/** Pure: the 43-character base64url secret of row `id` under `tag` (SHA-256 of `<tag>:<id>`). */
export function keySecret(tag: string, id: number): string {
  return createHash('sha256').update(`${tag}:${id}`).digest('base64url');
}

/** Pure: the Authorization value of row `id`'s key. */
export function keyCredential(tag: string, id: number): string {
  return `apk ${id}.${keySecret(tag, id)}`;
}

/**
 * The same secret in SQL: base64 of SHA-256 (44 characters with one '=' of padding, no line
 * break below 76), made base64url. `$1`: the tag; `id`: the row id.
 */
const SECRET_SQL =
  "translate(rtrim(encode(sha256(convert_to($1 || ':' || id::text, 'UTF8')), 'base64'), '='), '+/', '-_')";

export interface KeyedClients {
  tag: string;
  /** Row ids (API key ids) in the order they were made. */
  ids: number[];
}

/**
 * Adds `count` non-admin clients with keys, named `k<tag>-<n>` (13 characters, as long as the
 * list-all fill's `scale-<n>`: the name and the id's digits decide a key record's size, hence
 * its slot in nginx's dict; with 21-character names and 7-digit ids every record took a
 * 256-byte slot, 242 bytes a record at 10^6 against 159 at 5 digits), whose row ids are drawn
 * from the table's identity sequence inside the statement, so each key hash can be made from
 * its id. Every row is announced to the sidecars as any INSERT is (the creation trigger), so
 * gateways running on this database learn of them through the change feed. Then ANALYZE, as
 * fillTo does. Appends to `into` when given (the same tag, more keys).
 */
export async function insertKeyedClients(
  databaseUrl: string,
  count: number,
  into?: KeyedClients,
): Promise<KeyedClients & { seconds: number }> {
  const tag = into?.tag ?? randomBytes(2).toString('hex');
  const ids = into?.ids ?? [];
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  const started = performance.now();
  try {
    const { rows } = await db.query<{ lo: string; hi: string; n: number }>(
      `WITH s AS (
         SELECT nextval(pg_get_serial_sequence('api_clients', 'id')) AS id, g
         FROM generate_series($2::int + 1, $2::int + $3::int) AS g
       ), ins AS (
         INSERT INTO api_clients (id, name, is_admin, key_hash) OVERRIDING SYSTEM VALUE
         SELECT id, 'k' || $1 || '-' || lpad(g::text, 7, '0'), false,
                sha256(convert_to(${SECRET_SQL}, 'UTF8'))
         FROM s
         RETURNING id
       )
       SELECT min(id)::text AS lo, max(id)::text AS hi, count(*)::int AS n FROM ins`,
      [tag, ids.length, count],
    );
    const lo = Number(rows[0]?.lo);
    const hi = Number(rows[0]?.hi);
    const n = rows[0]?.n ?? 0;
    if (n !== count) throw new Error(`inserted ${n} keyed clients, not ${count}`);
    if (hi - lo + 1 === n) {
      for (let id = lo; id <= hi; id += 1) ids.push(id);
    } else {
      // Another writer drew from the sequence meanwhile: read this batch's ids back.
      const back = await db.query<string[]>({
        text: "SELECT id::text FROM api_clients WHERE name LIKE 'k' || $1 || '-%' AND id BETWEEN $2 AND $3 ORDER BY api_clients.id",
        values: [tag, lo, hi],
        rowMode: 'array',
      });
      for (const [id] of back.rows) ids.push(Number(id));
    }
    await db.query('ANALYZE api_clients');
    return { tag, ids, seconds: (performance.now() - started) / 1000 };
  } finally {
    await db.end();
  }
}

/** Writes the Authorization values of the first `count` keys, one a line (RANDOM_CREDENTIAL). */
export async function writeCredentialFile(
  path: string,
  keys: KeyedClients,
  count = keys.ids.length,
): Promise<void> {
  const out = createWriteStream(path);
  const lines: string[] = [];
  for (let i = 0; i < count; i += 1) {
    lines.push(keyCredential(keys.tag, keys.ids[i]!));
    if (lines.length === 10_000 || i === count - 1) {
      if (!out.write(`${lines.join('\n')}\n`)) await once(out, 'drain');
      lines.length = 0;
    }
  }
  out.end();
  await once(out, 'finish');
}
