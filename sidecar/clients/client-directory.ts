import type { ApiClientRow } from './api-client.js';
import type { ClientReads } from './client-reads.js';

type Lookup<K> = Map<K, ((row: ApiClientRow | null) => void)[]>;

interface Batch {
  ids: Lookup<number>;
  subjects: Lookup<string>;
  failures: ((err: unknown) => void)[];
}

/**
 * Read path for authentication: always fresh from PostgreSQL, never from a cache, so a
 * client deleted a moment ago (through any sidecar) is refused on the very next request.
 * Every look-up joins a batch that is sent on the next turn of the event loop, i.e. after
 * the request arrived: one `= ANY($1)` query answers all requests of that turn, which keeps
 * the cost per request low under load without ever answering from a stale read.
 */
export class ClientDirectory {
  private batch: Batch | null = null;

  constructor(private readonly store: ClientReads) {}

  byId(id: number): Promise<ApiClientRow | null> {
    return this.enqueue((b) => b.ids, id);
  }

  bySubject(apiClientId: string): Promise<ApiClientRow | null> {
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
