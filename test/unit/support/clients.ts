import type { ApiClientRow } from '../../../sidecar/clients/api-client.js';
import { hashSecret } from '../../../sidecar/keys/api-key.js';

/** An API client row as PostgreSQL would return it, holding the hash of `secret` (if any). */
export function row(
  id: number,
  options: { secret?: string; isAdmin?: boolean; name?: string; apiClientId?: string } = {},
): ApiClientRow {
  return {
    id,
    name: options.name ?? `client ${id}`,
    isAdmin: options.isAdmin ?? false,
    apiClientId: options.apiClientId ?? null,
    keyHash: options.secret === undefined ? null : hashSecret(options.secret),
    createdAt: new Date('2026-01-01T00:00:00Z'),
  };
}

/** The read side of the client directory over a fixed list of rows, for unit tests. */
export function directoryOf(rows: ApiClientRow[]) {
  return {
    byId: async (id: number) => rows.find((r) => r.id === id) ?? null,
    bySubject: async (subject: string) => rows.find((r) => r.apiClientId === subject) ?? null,
  };
}
