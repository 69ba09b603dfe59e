import type { ApiClientRow } from '../clients/store/api-client.js';

/**
 * The most rows of clients with a subject held: a row is about 520 bytes of heap (measured with
 * 10⁶: 515 MB without a key hash, 644 MB with one), so this bound keeps them near 65 MB whatever
 * the table holds, within the sidecar's 512 MiB limit in the Kubernetes manifests. Beyond it, the
 * subjects not held are asked of PostgreSQL, as before.
 */
export const SUBJECTS_MAX = 100_000;

/**
 * The most rows of clients without a subject held (API keys alone): about 6.5 MB. With 10⁵ the
 * bench's sidecar grew by 65-95 MB once its 10⁵ keys were made, and a heap that size cost
 * pauses (docs/decisions/20261202-api-key-clients-from-the-replica.md).
 */
export const KEYS_MAX = 10_000;

/**
 * The rows of the clients, in this sidecar's memory, kept by the key table's replicator beside
 * nginx's replica (replicator.ts): a bearer token's client, and an API key's client that nginx
 * asks about (a learnt record's miss, nginx's decision cache off), are found here instead of in
 * PostgreSQL (docs/decisions/20261128-bearer-clients-from-the-replica.md,
 * docs/decisions/20261202-api-key-clients-from-the-replica.md).
 *
 * A row held is never older than the last change notified for it: a change drops the client's
 * row at once (drop(), before nginx's decisions about it are ended), and only a read of
 * PostgreSQL that began after that drop may put it back (put() and gone() take the stamp
 * taken before their read; a read begun earlier, still in flight, cannot bring back the state
 * a change replaced). A client not held is asked of PostgreSQL, so a row missing costs a query,
 * never a wrong answer; that is also what happens to the rows beyond the bounds.
 */
export class ClientMirror {
  /** client id → its whole row (every column the directory reads). */
  private readonly rows = new Map<number, ApiClientRow>();
  /** subject → the id of the client in `rows` that has it. */
  private readonly subjects = new Map<string, number>();
  /** client id → the stamp of its last drop, until a read begun after it has put it back. */
  private readonly dropped = new Map<number, number>();
  private stamp = 0;
  /** Every client was read into it (a load or a fill) and it has followed the feed since. */
  filled = false;
  /** A row found no room (the bounds) since the last clear: it is asked of PostgreSQL. */
  overflowed = false;

  constructor(
    private readonly maxSubjects: number = SUBJECTS_MAX,
    private readonly maxKeys: number = KEYS_MAX,
  ) {}

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

  /** `rows` as read by a read begun at `since`. */
  put(rows: Iterable<ApiClientRow>, since: number): void {
    for (const row of rows) {
      if (!this.current(row.id, since)) continue;
      this.remove(row.id);
      const subject = row.apiClientId;
      // A subject moved from another client in the same change: that client's row goes (its
      // own row, later in this change, puts it back without the subject).
      const previous = subject === null ? undefined : this.subjects.get(subject);
      if (previous !== undefined) this.remove(previous);
      if (!this.room(subject !== null)) {
        this.overflowed = true;
        continue;
      }
      this.rows.set(row.id, row);
      if (subject !== null) this.subjects.set(subject, row.id);
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

  /** The row of the client whose subject is `subject`. */
  get(subject: string): ApiClientRow | undefined {
    const id = this.subjects.get(subject);
    return id === undefined ? undefined : this.rows.get(id);
  }

  /** The row of client `id`. */
  byId(id: number): ApiClientRow | undefined {
    return this.rows.get(id);
  }

  /** Clients with a subject held. */
  get size(): number {
    return this.subjects.size;
  }

  /** Clients held, with a subject or without. */
  get held(): number {
    return this.rows.size;
  }

  private room(withSubject: boolean): boolean {
    return withSubject
      ? this.subjects.size < this.maxSubjects
      : this.rows.size - this.subjects.size < this.maxKeys;
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
    const row = this.rows.get(id);
    if (row === undefined) return;
    this.rows.delete(id);
    const subject = row.apiClientId;
    if (subject !== null && this.subjects.get(subject) === id) this.subjects.delete(subject);
  }
}
