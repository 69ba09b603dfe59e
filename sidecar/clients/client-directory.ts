import type { ApiClientRow } from './api-client.js';
import type { ClientCache } from './client-cache.js';
import type { ClientStore } from './client-store.js';

interface Pending {
  promise: Promise<ApiClientRow | null>;
  snapshot: number | null;
}

/**
 * Read path for authentication: the cache first, then PostgreSQL. Concurrent look-ups of
 * one uncached client share a single query, so a burst of first requests costs one round trip.
 */
export class ClientDirectory {
  private readonly pendingById = new Map<number, Pending>();
  private readonly pendingBySubject = new Map<string, Pending>();

  constructor(
    private readonly store: ClientStore,
    private readonly cache: ClientCache,
  ) {}

  byId(id: number): Promise<ApiClientRow | null> | ApiClientRow {
    return this.cache.getById(id) ?? this.load(this.pendingById, id, () => this.store.get(id));
  }

  bySubject(apiClientId: string): Promise<ApiClientRow | null> | ApiClientRow {
    return (
      this.cache.getBySubject(apiClientId) ??
      this.load(this.pendingBySubject, apiClientId, () => this.store.findByApiClientId(apiClientId))
    );
  }

  private load<K>(
    pending: Map<K, Pending>,
    key: K,
    query: () => Promise<ApiClientRow | null>,
  ): Promise<ApiClientRow | null> {
    const snapshot = this.cache.snapshot();
    const inFlight = pending.get(key);
    // Join a query already under way only if nothing changed since it began: a query that
    // started before a delete must not answer a request that arrives after it.
    if (inFlight && snapshot !== null && inFlight.snapshot === snapshot) return inFlight.promise;
    const entry: Pending = { snapshot, promise: Promise.resolve(null) };
    entry.promise = query()
      .then((row) => {
        if (row) this.cache.store(row, snapshot);
        return row;
      })
      .finally(() => {
        if (pending.get(key) === entry) pending.delete(key);
      });
    pending.set(key, entry);
    return entry.promise;
  }
}
