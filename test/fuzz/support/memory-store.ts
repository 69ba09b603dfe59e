import type { ApiClientRow } from '../../../sidecar/clients/api-client.js';
import {
  isDescending,
  keyOf,
  type SortKey,
  sortField,
} from '../../../sidecar/clients/client-order.js';
import type {
  ClientStore,
  CreateOutcome,
  NewApiClient,
  Page,
  PageRequest,
} from '../../../sidecar/clients/client-store.js';

/** Compares two keys of one order as PostgreSQL compares rows (false before true, like SQL). */
function compareKeys(a: SortKey, b: SortKey): number {
  for (let i = 0; i < a.length; i++) {
    if (a[i] === b[i]) continue;
    return (a[i] as string | number) < (b[i] as string | number) ? -1 : 1;
  }
  return 0;
}

/**
 * ClientStore's contract in memory (unique name and api_client_id, ids in order), so the
 * management routes can take tens of thousands of fuzzed requests in seconds. PostgreSQL
 * behind the same routes is tested in test/integration/sidecar.
 */
export class MemoryClientStore {
  private readonly rows = new Map<number, ApiClientRow>();
  private nextId = 1;

  async create(client: NewApiClient, keyHash: Buffer | null): Promise<CreateOutcome> {
    for (const r of this.rows.values()) {
      if (r.name === client.name) return { ok: false, conflict: 'name' };
      if (client.apiClientId !== null && r.apiClientId === client.apiClientId) {
        return { ok: false, conflict: 'api_client_id' };
      }
    }
    const row: ApiClientRow = { id: this.nextId++, ...client, keyHash, createdAt: new Date() };
    this.rows.set(row.id, row);
    return { ok: true, row };
  }

  async get(id: number): Promise<ApiClientRow | null> {
    return this.rows.get(id) ?? null;
  }

  async findMany(ids: number[], apiClientIds: string[]): Promise<ApiClientRow[]> {
    return [...this.rows.values()].filter(
      (r) => ids.includes(r.id) || (r.apiClientId !== null && apiClientIds.includes(r.apiClientId)),
    );
  }

  async delete(id: number): Promise<ApiClientRow | null> {
    const row = this.rows.get(id) ?? null;
    this.rows.delete(id);
    return row;
  }

  /** Keyset paging like PgClientStore.list (names compared by code unit, not collation). */
  async list(request: PageRequest): Promise<Page> {
    const field = sortField(request.sort);
    const backwards = request.from?.direction === 'before';
    const sign = isDescending(request.sort) === backwards ? 1 : -1;
    const from = request.from;
    const all = [...this.rows.values()]
      .filter((r) => !from || sign * compareKeys(keyOf(r, field), from.key) > 0)
      .sort((a, b) => sign * compareKeys(keyOf(a, field), keyOf(b, field)));
    const more = request.limit !== null && all.length > request.limit;
    const page = more ? all.slice(0, request.limit!) : all;
    if (backwards) page.reverse();
    return { rows: page, total: this.rows.size, more };
  }

  /** This object where the routes expect the PostgreSQL store. */
  asStore(): ClientStore {
    return this as unknown as ClientStore;
  }
}
