import type pg from 'pg';
import type { ApiClientRow } from './api-client.js';

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

export interface Page {
  rows: ApiClientRow[];
  total: number;
  nextCursor: number | null;
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
      const e = err as { code?: string; constraint?: string };
      if (e.code === '23505') {
        return {
          ok: false,
          conflict: e.constraint === 'api_clients_api_client_id_key' ? 'api_client_id' : 'name',
        };
      }
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

  /** Clients in id order; `limit` null means all of them. */
  async list(limit: number | null, afterId: number): Promise<Page> {
    const fetch = limit === null ? null : limit + 1;
    const [{ rows }, count] = await Promise.all([
      this.pool.query<DbRow>(
        `SELECT ${COLUMNS} FROM api_clients WHERE id > $1 ORDER BY id LIMIT $2`,
        [afterId, fetch],
      ),
      this.pool.query<{ total: number }>('SELECT count(*)::int AS total FROM api_clients'),
    ]);
    const more = limit !== null && rows.length > limit;
    const page = more ? rows.slice(0, limit) : rows;
    return {
      rows: page.map(fromDb),
      total: count.rows[0]?.total ?? 0,
      nextCursor: more ? (page[page.length - 1]?.id ?? null) : null,
    };
  }
}
