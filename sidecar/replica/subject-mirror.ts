import type { ApiClientRow } from '../clients/store/api-client.js';

/**
 * The most rows held: a row is about 520 bytes of heap (measured with 10⁶: 515 MB without a
 * key hash, 644 MB with one), so this bound keeps the mirror near 50 MB whatever the table
 * holds, within the sidecar's 512 MiB limit in the Kubernetes manifests. Beyond it, the
 * subjects not held are asked of PostgreSQL, as before.
 */
export const SUBJECTS_MAX = 100_000;

/**
 * The rows of the clients that have a subject (`api_client_id`), in this sidecar's memory, kept
 * by the key table's replicator beside nginx's replica (replicator.ts): a bearer token's client
 * is found here instead of in PostgreSQL (docs/decisions/20261128-bearer-clients-from-the-replica.md).
 *
 * A row held is never older than the last change notified for it: a change drops the client's
 * row at once (drop(), before nginx's decisions about it are ended), and only a read of
 * PostgreSQL that began after that drop may put it back (put() and gone() take the stamp
 * taken before their read; a read begun earlier, still in flight, cannot bring back the state
 * a change replaced). A subject not held is asked of PostgreSQL, so a row missing costs a query,
 * never a wrong answer; that is also what happens to the rows beyond `max`.
 */
export class SubjectMirror {
  /** subject → the client's whole row (every column the directory reads). */
  private readonly rows = new Map<string, ApiClientRow>();
  /** client id → its subject in `rows`, so a change notified by id finds it. */
  private readonly subjects = new Map<number, string>();
  /** client id → the stamp of its last drop, until a read begun after it has put it back. */
  private readonly dropped = new Map<number, number>();
  private stamp = 0;
  /** Every client was read into it (a load or a fill) and it has followed the feed since. */
  filled = false;
  /** A row found no room (`max`) since the last clear: its subject is asked of PostgreSQL. */
  overflowed = false;

  constructor(private readonly max: number = SUBJECTS_MAX) {}

  /** The stamp to pass to put() and gone() for a read of PostgreSQL that starts now. */
  reading(): number {
    return this.stamp;
  }

  /** Clients `ids` changed: their rows are no longer held (asked of PostgreSQL until put back). */
  drop(ids: readonly number[]): void {
    this.stamp += 1;
    for (const id of ids) {
      this.remove(id);
      this.dropped.set(id, this.stamp);
    }
  }

  /** `rows` as read by a read begun at `since`; a row without a subject is not held. */
  put(rows: Iterable<ApiClientRow>, since: number): void {
    for (const row of rows) {
      if (!this.current(row.id, since)) continue;
      this.remove(row.id);
      if (row.apiClientId === null) continue;
      // A subject moved from another client in the same change: that client's row goes.
      const previous = this.rows.get(row.apiClientId);
      if (previous) this.subjects.delete(previous.id);
      else if (this.rows.size >= this.max) {
        this.overflowed = true;
        continue;
      }
      this.rows.set(row.apiClientId, row);
      this.subjects.set(row.id, row.apiClientId);
    }
  }

  /** Clients `ids` were found deleted by a read begun at `since`. */
  gone(ids: Iterable<number>, since: number): void {
    for (const id of ids) if (this.current(id, since)) this.remove(id);
  }

  /** Holds nothing (a load starts, or what was missed cannot be told). */
  clear(): void {
    this.rows.clear();
    this.subjects.clear();
    this.dropped.clear();
    this.filled = false;
    this.overflowed = false;
  }

  get(subject: string): ApiClientRow | undefined {
    return this.rows.get(subject);
  }

  get size(): number {
    return this.rows.size;
  }

  /**
   * Whether a read begun at `since` is newer than client `id`'s last drop (which it then ends:
   * the replicator reads one at a time, so no read begun before the drop is still to come).
   */
  private current(id: number, since: number): boolean {
    const at = this.dropped.get(id);
    if (at === undefined) return true;
    if (at > since) return false;
    this.dropped.delete(id);
    return true;
  }

  private remove(id: number): void {
    const subject = this.subjects.get(id);
    if (subject === undefined) return;
    this.subjects.delete(id);
    if (this.rows.get(subject)?.id === id) this.rows.delete(subject);
  }
}
