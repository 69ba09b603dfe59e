import type pg from 'pg';
import { type ApiClientRow, toRecord } from './api-client.js';
import { isDescending, KEY_SQL, keyOf, type Sort, type SortKey, sortField } from './order.js';
import { COLUMNS, type DbRow, fromDb } from './rows.js';

/** One page of a listing, in the listing's order. */
export interface PageRequest {
  sort: Sort;
  limit: number | null;
  /** Start after (or end before) this key; null: from the start. */
  from: { direction: 'after' | 'before'; key: SortKey } | null;
  /** Only names starting with this, ignoring case; absent or null: all. */
  namePrefix?: string | null;
}

export interface Page {
  rows: ApiClientRow[];
  total: number;
  /** More rows lie beyond this page in the direction it was read. */
  more: boolean;
}

/**
 * Reading API clients from PostgreSQL: one client, the clients a decision needs, a page or a
 * stream of the listing, and counts. Database faults propagate as exceptions. The auth path's
 * directory and the listing need only this; changes are ClientStore's.
 */
export class ClientReads {
  constructor(readonly pool: pg.Pool) {}

  /**
   * How many admin clients exist and have not expired at `now` (ms): the bootstrap lock holds
   * only while one does (an expired admin could not unlock).
   */
  async countAdmins(now: number = Date.now()): Promise<number> {
    const { rows } = await this.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM api_clients
       WHERE is_admin AND (expires_at IS NULL OR expires_at > $1)`,
      [new Date(now)],
    );
    return rows[0]!.n;
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
    const conditions: string[] = [];
    if (request.from) {
      values.push(...request.from.key);
      conditions.push(keyBound(exprs, ascending ? '>' : '<', 1));
    }
    const prefix = request.namePrefix ?? null;
    if (prefix !== null) {
      values.push(likePrefix(prefix));
      conditions.push(`${NAME_PREFIX_SQL} lower($${values.length})`);
    }
    const where = conditions.length > 0 ? `WHERE ${conditions.join(' AND ')}` : '';
    const order = exprs.map((e) => `${e} ${ascending ? 'ASC' : 'DESC'}`).join(', ');
    values.push(request.limit + 1);
    const [{ rows }, total] = await Promise.all([
      this.pool.query<DbRow>(
        `SELECT ${COLUMNS} FROM api_clients ${where} ORDER BY ${order} LIMIT $${values.length}`,
        values,
      ),
      prefix === null ? this.total() : this.totalWithPrefix(prefix),
    ]);
    const more = rows.length > request.limit;
    const page = (more ? rows.slice(0, request.limit) : rows).map(fromDb);
    if (backwards) page.reverse();
    return { rows: page, total, more };
  }

  /**
   * Every row after (or before) `from`, in `sort` order, as batches of at most `batch` rows,
   * each already serialised as the listing's items. In the sidecar this runs on the listing
   * thread (clients/listing/worker.ts), where the per-row work stops nothing else; PostgreSQL only reads
   * rows (serialising there cost it five times the CPU, and it shares a core with `/auth`'s
   * look-ups at full priority: 20261127-listing-thread.md). Each batch is its own keyset
   * query: no transaction or connection is held between batches, so a caller that reads slowly
   * pins nothing in the database, and `/auth` queries interleave. Rows before a key are read
   * forwards from the start up to it, so they stream in order too.
   */
  async *streamRecords(
    sort: Sort,
    from: PageRequest['from'],
    batch: number,
    namePrefix: string | null = null,
  ): AsyncGenerator<RecordBatch, void, undefined> {
    const field = sortField(sort);
    const exprs = KEY_SQL[field];
    const ascending = !isDescending(sort);
    const order = exprs.map((e) => `${e} ${ascending ? 'ASC' : 'DESC'}`).join(', ');
    // The upper bound of a "before" cursor stays; the lower bound moves with every batch.
    const end = from?.direction === 'before' ? from.key : null;
    let after = from?.direction === 'after' ? from.key : null;
    for (;;) {
      const values: unknown[] = [];
      const conditions: string[] = [];
      if (after) {
        conditions.push(keyBound(exprs, ascending ? '>' : '<', values.length + 1));
        values.push(...after);
      }
      if (end) {
        conditions.push(keyBound(exprs, ascending ? '<' : '>', values.length + 1));
        values.push(...end);
      }
      if (namePrefix !== null) {
        values.push(likePrefix(namePrefix));
        conditions.push(`${NAME_PREFIX_SQL} lower($${values.length})`);
      }
      values.push(batch);
      const where = conditions.length > 0 ? `WHERE ${conditions.join(' AND ')}` : '';
      const { rows } = await this.pool.query<DbRow>(
        `SELECT ${COLUMNS} FROM api_clients ${where} ORDER BY ${order} LIMIT $${values.length}`,
        values,
      );
      const clients = rows.map(fromDb);
      const firstRow = clients[0];
      const lastRow = clients[clients.length - 1];
      if (!firstRow || !lastRow) return;
      // Serialised as the paged listing and GET serialise (toRecord), so the three agree.
      const now = Date.now();
      const json = clients.map((client) => JSON.stringify(toRecord(client, now))).join(',');
      const last = keyOf(lastRow, field);
      yield { json, count: clients.length, first: keyOf(firstRow, field), last };
      if (clients.length < batch) return;
      after = last;
    }
  }

  /**
   * How many clients have a name starting with `prefix` (ignoring case): exact up to
   * EXACT_TOTAL_BOUND, beyond it EXACT_TOTAL_BOUND + 1 (there is no estimate of a filter; a
   * search that broad is narrowed by typing more).
   */
  async totalWithPrefix(prefix: string): Promise<number> {
    const { rows } = await this.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM (SELECT 1 FROM api_clients
         WHERE ${NAME_PREFIX_SQL} lower($1) LIMIT $2) AS bounded`,
      [likePrefix(prefix), EXACT_TOTAL_BOUND + 1],
    );
    return rows[0]?.n ?? 0;
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

/** Some rows of a listing, serialised, with the sort keys of the first and the last. */
export interface RecordBatch {
  json: string;
  count: number;
  first: SortKey;
  last: SortKey;
}

/** The name filter, as api_clients_name_prefix (migration 0009) serves it; `$n` follows. */
const NAME_PREFIX_SQL = 'lower(name) LIKE';

/**
 * `prefix` as a LIKE pattern, its own % _ \\ escaped, then any rest; passed through SQL's
 * lower() (`lower($n)`) so both sides are lowered by PostgreSQL alike. Always in an unnamed
 * statement: the planner then sees the pattern and scans the index's range (a prepared
 * statement's generic plan could not).
 */
function likePrefix(prefix: string): string {
  return `${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** Below this many clients, `total` is an exact count; above it, an estimate. */
export const EXACT_TOTAL_BOUND = 10_000;

/** `(exprs) op ($i, $i+1, ...)`: a row comparison, which an index on exprs serves. */
function keyBound(exprs: readonly string[], op: '<' | '>', first: number): string {
  const params = exprs.map((_, i) => `$${first + i}`);
  return `(${exprs.join(', ')}) ${op} (${params.join(', ')})`;
}
