import type { ApiClientRow } from './api-client.js';
import type { ChangeSink } from './change-listener.js';

/**
 * Recently used API client rows, so the hot auth path rarely touches PostgreSQL.
 * Correctness rests on three rules:
 * - entries are dropped on every change notification for their id;
 * - nothing is served or stored while the change listener is down (`trusted` false);
 * - a row read from the database is stored only if no notification arrived while it was
 *   being read (the generation check), so a concurrent delete can never be undone.
 * Only rows that exist are cached; an unknown id is asked of the database every time.
 */
export class ClientCache implements ChangeSink {
  private readonly byId = new Map<number, ApiClientRow>();
  private readonly bySubject = new Map<string, ApiClientRow>();
  private generation = 0;
  private trusted = false;

  constructor(private readonly maxEntries = 100_000) {}

  /** A token for `store`, taken before reading the database; null while nothing may be cached. */
  snapshot(): number | null {
    return this.trusted ? this.generation : null;
  }

  getById(id: number): ApiClientRow | undefined {
    return this.trusted ? this.byId.get(id) : undefined;
  }

  getBySubject(apiClientId: string): ApiClientRow | undefined {
    return this.trusted ? this.bySubject.get(apiClientId) : undefined;
  }

  /** Remembers a row read from the database, unless anything changed since `snapshot`. */
  store(row: ApiClientRow, snapshot: number | null): void {
    if (!this.trusted || snapshot === null || snapshot !== this.generation) return;
    if (this.byId.size >= this.maxEntries) this.evictOldest();
    this.byId.set(row.id, row);
    if (row.apiClientId !== null) this.bySubject.set(row.apiClientId, row);
  }

  get size(): number {
    return this.byId.size;
  }

  changed(id: number | '*'): void {
    this.generation += 1;
    if (id === '*') this.clear();
    else this.forget(id);
  }

  lost(): void {
    this.trusted = false;
    this.generation += 1;
    this.clear();
  }

  listening(): void {
    this.generation += 1;
    this.clear();
    this.trusted = true;
  }

  private clear(): void {
    this.byId.clear();
    this.bySubject.clear();
  }

  private forget(id: number): void {
    const row = this.byId.get(id);
    this.byId.delete(id);
    if (row?.apiClientId != null) this.bySubject.delete(row.apiClientId);
  }

  /** Insertion order approximates age; eviction only happens past `maxEntries`. */
  private evictOldest(): void {
    const oldest = this.byId.keys().next();
    if (!oldest.done) this.forget(oldest.value);
  }
}
