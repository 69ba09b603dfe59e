import { describe, expect, test } from 'vitest';
import { silentLogger } from '../../../sidecar/log.js';
import type { DecisionInvalidator } from '../../../sidecar/nginx/invalidator.js';
import type {
  ApplyOptions,
  KeyTableAnswer,
  KeyTableChange,
  NginxKeyTable,
} from '../../../sidecar/nginx/key-table.js';
import type { ChangeFeed, FeedHead } from '../../../sidecar/replica/change-feed.js';
import {
  DOUBT_RECORD,
  GONE_RECORD,
  keyRecordBytes,
} from '../../../sidecar/replica/key-record-bytes.js';
import { KeyTableReplicator } from '../../../sidecar/replica/replicator.js';
import { row, state } from './fixtures.js';

// What a heartbeat checks before it moves the position, and a row read before a doubt, with
// the feed and nginx's control socket replaced by in-memory stand-ins (the real ones: the fault
// matrix's "change notices lost while the heartbeats come through", test/e2e).

const EPOCH = 'e1';
const b64 = (r: ReturnType<typeof row>) => keyRecordBytes(r).toString('base64');

/** PostgreSQL as the stand-in holds it: rows, and the feed's changes (position → client). */
class Database {
  rows = new Map<number, ReturnType<typeof row>>();
  feed: Array<[number, number]> = [];
  /** When set, a read of rows waits for it (a read under way while a change commits). */
  hold: Promise<void> | null = null;
  readStarted: () => void = () => {};

  head(): FeedHead {
    return { epoch: EPOCH, position: this.feed.at(-1)?.[0] ?? 0, prunedThrough: 0 };
  }
  change(id: number, next: ReturnType<typeof row> | null): void {
    if (next) this.rows.set(id, next);
    else this.rows.delete(id);
    this.feed.push([this.head().position + 1, id]);
  }
  asFeed(): ChangeFeed {
    const changed = (from: number, to: number) => [
      ...new Set(this.feed.filter(([p]) => p > from && p <= to).map(([, id]) => id)),
    ];
    return {
      head: async () => this.head(),
      changedSince: async (from: number) => ({
        rows: changed(from, this.head().position),
        head: this.head(),
      }),
      changedThrough: async (from: number, to: number) => changed(from, to),
      records: async (ids: readonly number[]) => {
        const read = ids.flatMap((id) => (this.rows.has(id) ? [this.rows.get(id)!] : []));
        this.readStarted();
        if (this.hold) await this.hold;
        return read;
      },
      async *all() {},
      prune: async () => 0,
    } as unknown as ChangeFeed;
  }
}

/** nginx's replica as the stand-in holds it: records by id (base64), its position. */
class Nginx {
  records = new Map<number, string>();
  position = `${EPOCH}:0`;
  applies: number[][] = [];
  written: Array<[number, string]> = [];

  answer(): KeyTableAnswer {
    return state('complete', this.position, this.records.size);
  }
  asControl(): NginxKeyTable {
    return {
      state: async () => this.answer(),
      load: async () => this.answer(),
      apply: async (changes: KeyTableChange[], position: string | null, _o?: ApplyOptions) => {
        if (changes.length > 0) this.applies.push(changes.map((c) => c.id));
        for (const { id, record } of changes) {
          if (record) this.records.set(id, record.toString('base64'));
          if (record) this.written.push([id, record.toString('base64')]);
        }
        if (position !== null) this.position = position;
        return this.answer();
      },
      held: async (ids: readonly number[]) =>
        new Map(ids.map((id) => [id, this.records.get(id) ?? (false as const)])),
    } as unknown as NginxKeyTable;
  }
}

const markers: DecisionInvalidator = {
  clients: async () => true,
  all: async () => true,
  created: async () => true,
};

/** A replicator that has adopted nginx's replica of `db` at the feed's head. */
async function following(db: Database, nginx: Nginx) {
  for (const [id, r] of db.rows) nginx.records.set(id, b64(r));
  nginx.position = `${EPOCH}:${db.head().position}`;
  const replicator = new KeyTableReplicator(db.asFeed(), nginx.asControl(), markers, silentLogger);
  await replicator.resume();
  expect(replicator.status().phase).toBe('complete');
  return replicator;
}

describe("a heartbeat checks the feed before it moves nginx's position", () => {
  test('a change whose notice never came is applied at the next heartbeat, and only it', async () => {
    const db = new Database();
    for (const id of [1, 2, 3]) db.change(id, row(id));
    const nginx = new Nginx();
    const replicator = await following(db, nginx);
    nginx.applies = [];

    // Client 2 deleted and client 3 renamed, their notices lost; then a heartbeat comes back.
    db.change(2, null);
    db.change(3, row(3, 'renamed'));
    await replicator.heartbeat(db.head(), performance.now());

    expect(nginx.records.get(2)).toBe(GONE_RECORD.toString('base64'));
    expect(nginx.records.get(3)).toBe(b64(row(3, 'renamed')));
    // Client 1 is in the margin re-read but was right: not applied again.
    expect(nginx.applies.flat().sort()).toEqual([2, 3]);
    expect(nginx.position).toBe(`${EPOCH}:5`);
    expect(replicator.status().missedChanges).toBe(2);

    // Nothing moved since: a heartbeat applies nothing.
    nginx.applies = [];
    await replicator.heartbeat(db.head(), performance.now());
    expect(nginx.applies).toEqual([]);
  });

  test('a row read before its doubt is never written over the doubt', async () => {
    const db = new Database();
    db.change(1, row(1));
    const nginx = new Nginx();
    const replicator = await following(db, nginx);

    // A notice for client 1 (say, renamed): its push reads the row, and the read is slow.
    let release: () => void = () => {};
    db.hold = new Promise<void>((resolve) => {
      release = resolve;
    });
    const read = new Promise<void>((resolve) => {
      db.readStarted = resolve;
    });
    db.change(1, row(1, 'first'));
    const first = replicator.wrap().clients([1]);
    await read;
    // While that read is under way, client 1 is deleted: its notice puts it in doubt at once.
    db.change(1, null);
    db.readStarted = () => {};
    const second = replicator.wrap().clients([1]);
    await new Promise((r) => setTimeout(r, 10));
    expect(nginx.records.get(1)).toBe(DOUBT_RECORD.toString('base64'));
    db.hold = null;
    release();
    await Promise.all([first, second]);
    await replicator.settled();
    // The first push read 'first' before the doubt and did not write it; the second, the deletion.
    expect(nginx.records.get(1)).toBe(GONE_RECORD.toString('base64'));
    const doubt = DOUBT_RECORD.toString('base64');
    const gone = GONE_RECORD.toString('base64');
    expect(nginx.written.filter(([id]) => id === 1).map(([, r]) => r)).toEqual([
      doubt,
      doubt,
      gone,
    ]);
  });
});
