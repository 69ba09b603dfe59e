import type { AuditEventInput } from '../../../sidecar/audit/audit-log.js';
import type { AuditedChanges } from '../../../sidecar/audit/audited-change.js';
import { type ApiClientRow, toRecord } from '../../../sidecar/clients/store/api-client.js';
import {
  isDescending,
  keyOf,
  type Sort,
  type SortKey,
  sortField,
} from '../../../sidecar/clients/store/order.js';
import type { Page, PageRequest, RecordBatch } from '../../../sidecar/clients/store/reads.js';
import type {
  ClientChanges,
  ClientStore,
  CreateOutcome,
  NewApiClient,
  UpdateOutcome,
} from '../../../sidecar/clients/store/writes.js';
import type { Queryable } from '../../../sidecar/db/queryable.js';

/** Compares sort keys element by element, as PostgreSQL compares the row (false < true). */
function compareKeys(a: SortKey, b: SortKey): number {
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

/**
 * ClientStore's contract in memory (unique name and api_client_id, a credential on every row,
 * ids in order, keyset pages and streamed batches in any of the six orders), so the management
 * routes can take tens of thousands of fuzzed requests in seconds. PostgreSQL behind the same
 * routes is tested in test/integration/sidecar. Text compares by UTF-16 code unit here, not by
 * the database's collation: any total order serves the routes.
 */
export class MemoryClientStore {
  private readonly rows = new Map<number, ApiClientRow>();
  private nextId = 1;

  async create(client: NewApiClient, keyHash: Buffer | null): Promise<CreateOutcome> {
    const taken = this.collision(0, client.name, client.apiClientId);
    if (taken) return { ok: false, conflict: taken };
    const row: ApiClientRow = {
      id: this.nextId++,
      name: client.name,
      isAdmin: client.isAdmin,
      apiClientId: client.apiClientId,
      keyHash,
      createdAt: new Date(),
      expiresAt: client.expiresAt ?? null,
      lastUsedAt: null,
      previousKeyHash: null,
      previousKeyExpiresAt: null,
      rateLimit: client.rateLimit ?? null,
      permissions: client.permissions ?? null,
    };
    this.rows.set(row.id, row);
    return { ok: true, row };
  }

  async update(id: number, changes: ClientChanges): Promise<UpdateOutcome> {
    const row = this.rows.get(id);
    if (!row) return { ok: false, conflict: 'missing' };
    const next: ApiClientRow = {
      ...row,
      ...(changes.name !== undefined ? { name: changes.name } : {}),
      ...(changes.isAdmin !== undefined ? { isAdmin: changes.isAdmin } : {}),
      ...(changes.apiClientId !== undefined ? { apiClientId: changes.apiClientId } : {}),
      ...(changes.expiresAt !== undefined ? { expiresAt: changes.expiresAt } : {}),
      ...(changes.rateLimit !== undefined ? { rateLimit: changes.rateLimit } : {}),
      ...(changes.permissions !== undefined ? { permissions: changes.permissions } : {}),
    };
    const taken = this.collision(id, next.name, next.apiClientId);
    if (taken) return { ok: false, conflict: taken };
    if (next.keyHash === null && next.apiClientId === null) {
      return { ok: false, conflict: 'no_credential' };
    }
    this.rows.set(id, next);
    return { ok: true, row: next };
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

  async list(request: PageRequest & { limit: number }): Promise<Page> {
    const backwards = request.from?.direction === 'before';
    let rows = this.matching(this.ordered(request.sort), request.namePrefix ?? null);
    if (backwards) rows.reverse();
    const sign = isDescending(request.sort) === backwards ? 1 : -1;
    const field = sortField(request.sort);
    const from = request.from;
    if (from) rows = rows.filter((r) => sign * compareKeys(keyOf(r, field), from.key) > 0);
    const more = rows.length > request.limit;
    const page = rows.slice(0, request.limit);
    if (backwards) page.reverse();
    const total = request.namePrefix
      ? this.matching([...this.rows.values()], request.namePrefix).length
      : this.rows.size;
    return { rows: page, total, more };
  }

  async *streamRecords(
    sort: Sort,
    from: PageRequest['from'],
    batch: number,
    namePrefix: string | null = null,
  ): AsyncGenerator<RecordBatch, void, undefined> {
    const field = sortField(sort);
    const sign = isDescending(sort) ? -1 : 1;
    const rows = this.matching(this.ordered(sort), namePrefix).filter((r) => {
      if (!from) return true;
      const c = sign * compareKeys(keyOf(r, field), from.key);
      return from.direction === 'after' ? c > 0 : c < 0;
    });
    for (let i = 0; i < rows.length; i += batch) {
      const part = rows.slice(i, i + batch);
      yield {
        json: part.map((r) => JSON.stringify(toRecord(r))).join(','),
        count: part.length,
        first: keyOf(part[0]!, field),
        last: keyOf(part.at(-1)!, field),
      };
    }
  }

  async total(): Promise<number> {
    return this.rows.size;
  }

  async totalWithPrefix(prefix: string): Promise<number> {
    return this.matching([...this.rows.values()], prefix).length;
  }

  /** The rows whose name starts with `prefix`, ignoring case (as lower() in PostgreSQL). */
  private matching(rows: ApiClientRow[], prefix: string | null): ApiClientRow[] {
    if (prefix === null) return rows;
    const p = prefix.toLowerCase();
    return rows.filter((r) => r.name.toLowerCase().startsWith(p));
  }

  /** Audited changes in memory: each change runs, its event is built (and kept) as PostgreSQL would. */
  changes(): AuditedChanges {
    return {
      run: async (work, event) => {
        const outcome = await work(this.noDatabase());
        this.events.push(event(outcome));
        return outcome;
      },
    };
  }

  readonly events: AuditEventInput[] = [];

  /** A connection that is never used here: the memory store ignores it. */
  noDatabase(): Queryable {
    return {
      query: () => {
        throw new Error('no database in the memory store');
      },
    } as unknown as Queryable;
  }

  /** This object where the routes expect the PostgreSQL store. */
  asStore(): ClientStore {
    return this as unknown as ClientStore;
  }

  private ordered(sort: Sort): ApiClientRow[] {
    const field = sortField(sort);
    const sign = isDescending(sort) ? -1 : 1;
    return [...this.rows.values()].sort(
      (a, b) => sign * compareKeys(keyOf(a, field), keyOf(b, field)),
    );
  }

  private collision(
    self: number,
    name: string,
    apiClientId: string | null,
  ): 'name' | 'api_client_id' | null {
    for (const r of this.rows.values()) {
      if (r.id === self) continue;
      if (r.name === name) return 'name';
      if (apiClientId !== null && r.apiClientId === apiClientId) return 'api_client_id';
    }
    return null;
  }
}
