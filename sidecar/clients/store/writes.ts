import type { Permissions } from '../../../common/permissions.js';
import type { Queryable } from '../../db/queryable.js';
import type { ApiClientRow, RateLimit } from './api-client.js';
import { ClientReads } from './reads.js';
import { COLUMNS, type DbRow, fromDb } from './rows.js';

export interface NewApiClient {
  name: string;
  isAdmin: boolean;
  apiClientId: string | null;
  /** Absent or null: never expires. */
  expiresAt?: Date | null;
  /** Absent or null: not limited. */
  rateLimit?: RateLimit | null;
  /** Absent or null: may call everything. */
  permissions?: Permissions;
}

/** A rotation's outcome: the row with its new key hash, no such client, or a token-only one. */
export type RotateOutcome =
  | { ok: true; row: ApiClientRow }
  | { ok: false; conflict: 'missing' | 'no_api_key' };

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
  expiresAt?: Date | null;
  /** null: no limit. */
  rateLimit?: RateLimit | null;
  /** null: may call everything. */
  permissions?: Permissions;
}

/** jsonb as pg takes it: text (pg would send a JS array as a PostgreSQL array), or SQL NULL. */
function jsonOrNull(permissions: Permissions | undefined): string | null {
  return permissions ? JSON.stringify(permissions) : null;
}

function collision(err: unknown): 'name' | 'api_client_id' | 'no_credential' | null {
  const e = err as { code?: string; constraint?: string };
  if (e.code === '23505') {
    return e.constraint === 'api_clients_api_client_id_key' ? 'api_client_id' : 'name';
  }
  if (e.code === '23514' && e.constraint === 'api_clients_has_a_credential') return 'no_credential';
  return null;
}

/**
 * PostgreSQL access for API clients: the reads (ClientReads) and the changes. Database faults
 * propagate as exceptions. The changes (create, update, delete, rotate) take the connection to
 * run on, so that a change and its audit event share one transaction
 * (sidecar/audit/audited-change.ts); by default the pool.
 */
export class ClientStore extends ClientReads {
  /** Inserts a client; a unique-constraint collision is an outcome, not an exception. */
  async create(
    client: NewApiClient,
    keyHash: Buffer | null,
    db: Queryable = this.pool,
  ): Promise<CreateOutcome> {
    try {
      const { rows } = await db.query<DbRow>(
        `INSERT INTO api_clients (name, is_admin, api_client_id, key_hash, expires_at,
           rate_limit_requests, rate_limit_per_seconds, permissions)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING ${COLUMNS}`,
        [
          client.name,
          client.isAdmin,
          client.apiClientId,
          keyHash,
          client.expiresAt ?? null,
          client.rateLimit?.requests ?? null,
          client.rateLimit?.perSeconds ?? null,
          jsonOrNull(client.permissions),
        ],
      );
      return { ok: true, row: fromDb(rows[0]!) };
    } catch (err) {
      const conflict = collision(err);
      if (conflict === 'name' || conflict === 'api_client_id') return { ok: false, conflict };
      throw err;
    }
  }

  /** Changes the given fields in one statement; collisions are outcomes, not exceptions. */
  async update(
    id: number,
    changes: ClientChanges,
    db: Queryable = this.pool,
  ): Promise<UpdateOutcome> {
    const sets: string[] = [];
    const values: unknown[] = [id];
    const set = (column: string, value: unknown) => {
      values.push(value);
      sets.push(`${column} = $${values.length}`);
    };
    if (changes.name !== undefined) set('name', changes.name);
    if (changes.isAdmin !== undefined) set('is_admin', changes.isAdmin);
    if (changes.apiClientId !== undefined) set('api_client_id', changes.apiClientId);
    if (changes.expiresAt !== undefined) set('expires_at', changes.expiresAt);
    if (changes.rateLimit !== undefined) {
      set('rate_limit_requests', changes.rateLimit?.requests ?? null);
      set('rate_limit_per_seconds', changes.rateLimit?.perSeconds ?? null);
    }
    if (changes.permissions !== undefined) set('permissions', jsonOrNull(changes.permissions));
    try {
      const { rows } = await db.query<DbRow>(
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

  async delete(id: number, db: Queryable = this.pool): Promise<ApiClientRow | null> {
    const { rows } = await db.query<DbRow>(
      `DELETE FROM api_clients WHERE id = $1 RETURNING ${COLUMNS}`,
      [id],
    );
    return rows[0] ? fromDb(rows[0]) : null;
  }

  /**
   * Replaces the key hash. With `graceEndsAt` the current hash becomes the previous one,
   * accepted until then; without, it is dropped at once. Only one previous hash is kept: a
   * rotation during a grace period drops the older one.
   */
  async rotate(
    id: number,
    keyHash: Buffer,
    graceEndsAt: Date | null,
    db: Queryable = this.pool,
  ): Promise<RotateOutcome> {
    const { rows } = await db.query<DbRow>(
      `UPDATE api_clients
       SET previous_key_hash = CASE WHEN $3::timestamptz IS NULL THEN NULL ELSE key_hash END,
           previous_key_expires_at = $3, key_hash = $2
       WHERE id = $1 AND key_hash IS NOT NULL RETURNING ${COLUMNS}`,
      [id, keyHash, graceEndsAt],
    );
    if (rows[0]) return { ok: true, row: fromDb(rows[0]) };
    const exists = await db.query('SELECT 1 FROM api_clients WHERE id = $1', [id]);
    return { ok: false, conflict: exists.rowCount ? 'no_api_key' : 'missing' };
  }

  /**
   * Sets last_used_at = `at` on these clients, skipping those written less than `minAgeMs`
   * before it (another sidecar may have just written): the number of rows changed.
   */
  async touchLastUsed(ids: readonly number[], at: Date, minAgeMs: number): Promise<number> {
    const { rowCount } = await this.pool.query({
      name: 'api_clients_touch_last_used',
      text: `UPDATE api_clients SET last_used_at = $2
             WHERE id = ANY($1::bigint[])
               AND (last_used_at IS NULL
                    OR last_used_at <= $2::timestamptz - $3::float8 * interval '1 millisecond')`,
      values: [ids, at, minAgeMs],
    });
    return rowCount ?? 0;
  }
}
