import type { ApiClientRow } from '../../../sidecar/clients/api-client.js';
import type {
  ClientStore,
  CreateOutcome,
  NewApiClient,
  Page,
} from '../../../sidecar/clients/client-store.js';

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

  async list(limit: number | null, afterId: number): Promise<Page> {
    const all = [...this.rows.values()].filter((r) => r.id > afterId).sort((a, b) => a.id - b.id);
    const page = limit === null ? all : all.slice(0, limit);
    const more = limit !== null && all.length > limit;
    return { rows: page, total: this.rows.size, nextCursor: more ? page.at(-1)!.id : null };
  }

  /** This object where the routes expect the PostgreSQL store. */
  asStore(): ClientStore {
    return this as unknown as ClientStore;
  }
}
