import type pg from 'pg';
import type { ApiClientRow } from './api-client.js';
import {
  isDescending,
  KEY_SQL,
  keyOf,
  type Sort,
  type SortKey,
  sortField,
} from './client-order.js';

const COLUMNS = 'id, name, is_admin, api_client_id, key_hash, created_at';

interface DbRow {
  id: number;
  name: string;
  is_admin: boolean;
  api_client_id: string | null;
  key_hash: Buffer | null;
  created_at: Date;
}

function fromDb(row: DbRow): ApiClientRow {
  return {
    id: row.id,
    name: row.name,
    isAdmin: row.is_admin,
    apiClientId: row.api_client_id,
    keyHash: row.key_hash,
    createdAt: row.created_at,
  };
}

export interface NewApiClient {
  name: string;
  isAdmin: boolean;
  apiClientId: string | null;
}

/** Which unique field a creation collided with. */
export type CreateOutcome =
  | { ok: true; row: ApiClientRow }
  | { ok: false; conflict: 'name' | 'api_client_id' };

/** An update's outcome: the new row, no such client, a collision, or no credential left. */
export type UpdateOutcome =
  | { ok: true; row: ApiClientRow }
  | { ok: false; conflict: 'name' | 'api_client_id' | 'no_credential' }
  | { ok: false; conflict: 'missing' };

export interface ClientChanges {
  name?: string;
  isAdmin?: boolean;
  apiClientId?: string | null;
}

/** One page of a listing, in the listing's order. */
export interface PageRequest {
  sort: Sort;
  limit: number | null;
  /** Start after (or end before) this key; null: from the start. */
  from: { direction: 'after' | 'before'; key: SortKey } | null;
}

export interface Page {
  rows: ApiClientRow[];
  total: number;
  /** More rows lie beyond this page in the direction it was read. */
  more: boolean;
}

function collision(err: unknown): 'name' | 'api_client_id' | 'no_credential' | null {
  const e = err as { code?: string; constraint?: string };
  if (e.code === '23505') {
    return e.constraint === 'api_clients_api_client_id_key' ? 'api_client_id' : 'name';
  }
  if (e.code === '23514' && e.constraint === 'api_clients_has_a_credential') return 'no_credential';
  return null;
}

/** PostgreSQL access for API clients. Database faults propagate as exceptions. */
export class ClientStore {
  constructor(private readonly pool: pg.Pool) {}

  /** Inserts a client; a unique-constraint collision is an outcome, not an exception. */
  async create(client: NewApiClient, keyHash: Buffer | null): Promise<CreateOutcome> {
    try {
      const { rows } = await this.pool.query<DbRow>(
        `INSERT INTO api_clients (name, is_admin, api_client_id, key_hash)
         VALUES ($1, $2, $3, $4) RETURNING ${COLUMNS}`,
        [client.name, client.isAdmin, client.apiClientId, keyHash],
      );
      return { ok: true, row: fromDb(rows[0]!) };
    } catch (err) {
      const conflict = collision(err);
      if (conflict === 'name' || conflict === 'api_client_id') return { ok: false, conflict };
      throw err;
    }
  }

  /** Changes the given fields in one statement; collisions are outcomes, not exceptions. */
  async update(id: number, changes: ClientChanges): Promise<UpdateOutcome> {
    const sets: string[] = [];
    const values: unknown[] = [id];
    const set = (column: string, value: unknown) => {
      values.push(value);
      sets.push(`${column} = $${values.length}`);
    };
    if (changes.name !== undefined) set('name', changes.name);
    if (changes.isAdmin !== undefined) set('is_admin', changes.isAdmin);
    if (changes.apiClientId !== undefined) set('api_client_id', changes.apiClientId);
    try {
      const { rows } = await this.pool.query<DbRow>(
        `UPDATE api_clients SET ${sets.join(', ')} WHERE id = $1 RETURNING ${COLUMNS}`,
        values,
      );
      return rows[0] ? { ok: true, row: fromDb(rows[0]) } : { ok: false, conflict: 'missing' };
    } catch (err) {
      const conflict = collision(err);
      if (conflict) return { ok: false, conflict };
      throw err;
    }
  }

  async get(id: number): Promise<ApiClientRow | null> {
    const { rows } = await this.pool.query<DbRow>(
      `SELECT ${COLUMNS} FROM api_clients WHERE id = $1`,
      [id],
    );
    return rows[0] ? fromDb(rows[0]) : null;
  }

  /** The clients with any of these ids or api_client_ids, in one round trip. */
  async findMany(ids: number[], apiClientIds: string[]): Promise<ApiClientRow[]> {
    const { rows } = await this.pool.query<DbRow>({
      name: 'api_clients_find_many',
      text: `SELECT ${COLUMNS} FROM api_clients
             WHERE id = ANY($1::bigint[]) OR api_client_id = ANY($2::text[])`,
      values: [ids, apiClientIds],
    });
    return rows.map(fromDb);
  }

  async delete(id: number): Promise<ApiClientRow | null> {
    const { rows } = await this.pool.query<DbRow>(
      `DELETE FROM api_clients WHERE id = $1 RETURNING ${COLUMNS}`,
      [id],
    );
    return rows[0] ? fromDb(rows[0]) : null;
  }

  /**
   * One page in `sort` order by keyset: rows strictly after (or before) a key, so rows added or
   * removed elsewhere never shift the page. Reads at most `limit + 1` rows wherever the key lies:
   * a page deep in the table costs what the first one costs. Every row (no limit) is `stream`'s.
   */
  async list(request: PageRequest & { limit: number }): Promise<Page> {
    const exprs = KEY_SQL[sortField(request.sort)];
    // Reading backwards walks the opposite order, then flips the rows back.
    const backwards = request.from?.direction === 'before';
    const ascending = isDescending(request.sort) === backwards;
    const values: unknown[] = [];
    let where = '';
    if (request.from) {
      values.push(...request.from.key);
      where = `WHERE ${keyBound(exprs, ascending ? '>' : '<', 1)}`;
    }
    const order = exprs.map((e) => `${e} ${ascending ? 'ASC' : 'DESC'}`).join(', ');
    values.push(request.limit + 1);
    const [{ rows }, total] = await Promise.all([
      this.pool.query<DbRow>(
        `SELECT ${COLUMNS} FROM api_clients ${where} ORDER BY ${order} LIMIT $${values.length}`,
        values,
      ),
      this.total(),
    ]);
    const more = rows.length > request.limit;
    const page = (more ? rows.slice(0, request.limit) : rows).map(fromDb);
    if (backwards) page.reverse();
    return { rows: page, total, more };
  }

  /**
   * Every row after (or before) `from`, in `sort` order, as batches of at most `batch` rows.
   * Each batch is its own keyset query: no transaction or connection is held between batches, so
   * a caller that reads slowly pins nothing in the database, and `/auth` queries interleave.
   * Rows before a key are read forwards from the start up to it, so they stream in order too.
   */
  async *stream(
    sort: Sort,
    from: PageRequest['from'],
    batch: number,
  ): AsyncGenerator<ApiClientRow[], void, undefined> {
    const exprs = KEY_SQL[sortField(sort)];
    const ascending = !isDescending(sort);
    const forward = ascending ? '>' : '<';
    const order = exprs.map((e) => `${e} ${ascending ? 'ASC' : 'DESC'}`).join(', ');
    // The upper bound of a "before" cursor stays; the lower bound moves with every batch.
    const end = from?.direction === 'before' ? from.key : null;
    let after = from?.direction === 'after' ? from.key : null;
    for (;;) {
      const values: unknown[] = [];
      const conditions: string[] = [];
      if (after) {
        conditions.push(keyBound(exprs, forward, values.length + 1));
        values.push(...after);
      }
      if (end) {
        conditions.push(keyBound(exprs, ascending ? '<' : '>', values.length + 1));
        values.push(...end);
      }
      values.push(batch);
      const where = conditions.length > 0 ? `WHERE ${conditions.join(' AND ')}` : '';
      const { rows } = await this.pool.query<DbRow>(
        `SELECT ${COLUMNS} FROM api_clients ${where} ORDER BY ${order} LIMIT $${values.length}`,
        values,
      );
      if (rows.length === 0) return;
      const page = rows.map(fromDb);
      yield page;
      if (rows.length < batch) return;
      after = keyOf(page[page.length - 1]!, sortField(sort));
    }
  }

  /**
   * How many clients there are: exact up to EXACT_TOTAL_BOUND, beyond it PostgreSQL's estimate
   * (the planner's: rows per page from the last ANALYZE times the table's pages now). An exact
   * count of a million rows takes tens of milliseconds on every page; the bounded count and the
   * estimate take one. Never below the bound once beyond it.
   */
  async total(): Promise<number> {
    const { rows } = await this.pool.query<{ n: number }>({
      name: 'api_clients_bounded_count',
      text: 'SELECT count(*)::int AS n FROM (SELECT 1 FROM api_clients LIMIT $1) AS bounded',
      values: [EXACT_TOTAL_BOUND + 1],
    });
    const exact = rows[0]?.n ?? 0;
    if (exact <= EXACT_TOTAL_BOUND) return exact;
    const estimate = await this.pool.query<{ n: number | null }>({
      name: 'api_clients_estimated_count',
      text: `SELECT CASE WHEN c.reltuples < 0 OR c.relpages = 0 THEN NULL
                    ELSE round(c.reltuples / c.relpages
                               * (pg_relation_size(c.oid) / current_setting('block_size')::int))
                    END::bigint AS n
             FROM pg_class c WHERE c.oid = 'api_clients'::regclass`,
    });
    const n = estimate.rows[0]?.n;
    if (n === null || n === undefined) {
      // Never analysed yet (a table just filled): count once exactly; autovacuum will analyse.
      const all = await this.pool.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM api_clients',
      );
      return all.rows[0]?.n ?? 0;
    }
    return Math.max(EXACT_TOTAL_BOUND + 1, n);
  }
}

/** Below this many clients, `total` is an exact count; above it, an estimate. */
export const EXACT_TOTAL_BOUND = 10_000;

/** `(exprs) op ($i, $i+1, ...)`: a row comparison, which an index on exprs serves. */
function keyBound(exprs: readonly string[], op: '<' | '>', first: number): string {
  const params = exprs.map((_, i) => `$${first + i}`);
  return `(${exprs.join(', ')}) ${op} (${params.join(', ')})`;
}
