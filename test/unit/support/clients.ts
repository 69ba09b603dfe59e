import { createHash } from 'node:crypto';
import type { Permissions } from '../../../common/permissions.js';
import type { ApiClientRow } from '../../../sidecar/clients/store/api-client.js';

/**
 * SHA-256 by node:crypto directly, not by the module under test: rows are built when test files
 * load, and a mutant that broke hashing there would fail the load instead of a test.
 */
function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/** An API client row as PostgreSQL would return it, holding the hash of `secret` (if any). */
export function row(
  id: number,
  options: {
    secret?: string;
    isAdmin?: boolean;
    name?: string;
    apiClientId?: string;
    expiresAt?: Date | null;
    previousSecret?: string;
    previousKeyExpiresAt?: Date | null;
    rateLimit?: { requests: number; perSeconds: number } | null;
    permissions?: Permissions;
  } = {},
): ApiClientRow {
  return {
    id,
    name: options.name ?? `client ${id}`,
    isAdmin: options.isAdmin ?? false,
    apiClientId: options.apiClientId ?? null,
    keyHash: options.secret === undefined ? null : sha256(options.secret),
    createdAt: new Date('2026-01-01T00:00:00Z'),
    expiresAt: options.expiresAt ?? null,
    lastUsedAt: null,
    previousKeyHash: options.previousSecret === undefined ? null : sha256(options.previousSecret),
    previousKeyExpiresAt: options.previousKeyExpiresAt ?? null,
    rateLimit: options.rateLimit ?? null,
    permissions: options.permissions ?? null,
  };
}

/** The read side of the client directory over a fixed list of rows, for unit tests. */
export function directoryOf(rows: ApiClientRow[]) {
  return {
    byId: async (id: number) => rows.find((r) => r.id === id) ?? null,
    bySubject: async (subject: string) => rows.find((r) => r.apiClientId === subject) ?? null,
  };
}
