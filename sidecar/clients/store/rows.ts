import type { Permissions } from '../../../common/permissions.js';
import type { ApiClientRow, RateLimit } from './api-client.js';

// One row of api_clients as the stores read it back: the columns selected (or RETURNING) and
// their mapping to ApiClientRow, shared by reads (reads.ts) and changes (writes.ts).

export const COLUMNS = `id, name, is_admin, api_client_id, key_hash, created_at, expires_at,
  last_used_at, previous_key_hash, previous_key_expires_at, rate_limit_requests,
  rate_limit_per_seconds, permissions`;

export interface DbRow {
  id: number;
  name: string;
  is_admin: boolean;
  api_client_id: string | null;
  key_hash: Buffer | null;
  created_at: Date;
  expires_at: Date | null;
  last_used_at: Date | null;
  previous_key_hash: Buffer | null;
  previous_key_expires_at: Date | null;
  rate_limit_requests: number | null;
  rate_limit_per_seconds: number | null;
  /** jsonb, parsed by pg; written only after validatePermissions. */
  permissions: Permissions;
}

export function fromDb(row: DbRow): ApiClientRow {
  return {
    id: row.id,
    name: row.name,
    isAdmin: row.is_admin,
    apiClientId: row.api_client_id,
    keyHash: row.key_hash,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    lastUsedAt: row.last_used_at,
    previousKeyHash: row.previous_key_hash,
    previousKeyExpiresAt: row.previous_key_expires_at,
    rateLimit: rateLimitOf(row),
    permissions: row.permissions,
  };
}

/** The rate limit of a row's two columns: both or none. */
export function rateLimitOf(
  row: Pick<DbRow, 'rate_limit_requests' | 'rate_limit_per_seconds'>,
): RateLimit | null {
  return row.rate_limit_requests !== null && row.rate_limit_per_seconds !== null
    ? { requests: row.rate_limit_requests, perSeconds: row.rate_limit_per_seconds }
    : null;
}
