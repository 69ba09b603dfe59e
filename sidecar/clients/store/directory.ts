import type { ApiClientRow } from './api-client.js';
import type { ClientReads } from './reads.js';

type Lookup<K> = Map<K, ((row: ApiClientRow | null) => void)[]>;

interface Batch {
  ids: Lookup<number>;
  subjects: Lookup<string>;
  failures: ((err: unknown) => void)[];
}

/**
 * Rows held in this sidecar and known to be current (the key table's replicator keeps them,
 * replica/client-mirror.ts): a row, or undefined when the client is not held or the holder is
 * not trusted now (then PostgreSQL is asked).
 */
export interface HeldClients {
  heldBySubject(apiClientId: string): ApiClientRow | undefined;
  heldById(id: number): ApiClientRow | undefined;
}

/**
 * Read path for authentication: while the key table's replica is trusted, the row the
 * replicator holds, which a change drops before nginx's decisions about the client end: never
 * older than what nginx's own replica decides hits with
 * (docs/decisions/20261128-bearer-clients-from-the-replica.md,
 * docs/decisions/20261202-api-key-clients-from-the-replica.md). Otherwise, and for a client it
 * does not hold, fresh from PostgreSQL, never from a cache.
 * Every look-up joins a batch that is sent on the next turn of the event loop, i.e. after
 * the request arrived: one `= ANY($1)` query answers all requests of that turn, which keeps
 * the cost per request low under load without ever answering from a stale read.
 */
export class ClientDirectory {
  private batch: Batch | null = null;

  constructor(
    private readonly store: ClientReads,
    private readonly held: HeldClients | null = null,
  ) {}

  byId(id: number): Promise<ApiClientRow | null> {
    const row = this.held?.heldById(id);
    if (row) return Promise.resolve(row);
    return this.enqueue((b) => b.ids, id);
  }

  bySubject(apiClientId: string): Promise<ApiClientRow | null> {
    const row = this.held?.heldBySubject(apiClientId);
    if (row) return Promise.resolve(row);
    return this.enqueue((b) => b.subjects, apiClientId);
  }

  private enqueue<K>(pick: (b: Batch) => Lookup<K>, key: K): Promise<ApiClientRow | null> {
    if (!this.batch) {
      this.batch = { ids: new Map(), subjects: new Map(), failures: [] };
      setImmediate(() => this.flush());
    }
    const batch = this.batch;
    return new Promise((resolve, reject) => {
      const waiting = pick(batch).get(key);
      if (waiting) waiting.push(resolve);
      else pick(batch).set(key, [resolve]);
      batch.failures.push(reject);
    });
  }

  private flush(): void {
    const batch = this.batch!;
    this.batch = null;
    this.store.findMany([...batch.ids.keys()], [...batch.subjects.keys()]).then(
      (rows) => {
        const byId = new Map(rows.map((r) => [r.id, r]));
        const bySubject = new Map(rows.flatMap((r) => (r.apiClientId ? [[r.apiClientId, r]] : [])));
        for (const [id, resolvers] of batch.ids) for (const r of resolvers) r(byId.get(id) ?? null);
        for (const [subject, resolvers] of batch.subjects) {
          for (const r of resolvers) r(bySubject.get(subject) ?? null);
        }
      },
      (err: unknown) => {
        for (const reject of batch.failures) reject(err);
      },
    );
  }
}
