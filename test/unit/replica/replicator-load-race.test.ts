import { describe, expect, test } from 'vitest';
import { silentLogger } from '../../../sidecar/log.js';
import type { DecisionInvalidator } from '../../../sidecar/nginx/invalidator.js';
import type { KeyTableChange, NginxKeyTable } from '../../../sidecar/nginx/key-table.js';
import type { ChangeFeed, FeedHead } from '../../../sidecar/replica/change-feed.js';
import { KeyTableReplicator } from '../../../sidecar/replica/replicator.js';
import { row, state } from './fixtures.js';

// The replicator's order of operations during a load, with the feed and nginx's control socket
// replaced by in-memory stand-ins (the real ones are exercised by test/e2e/key-table.test.ts;
// this moment, between a load's catch-up read and its completion, is milliseconds long there).

describe('a change notified while a load completes', () => {
  test('reaches nginx once the load is done, though the load did not read it', async () => {
    const head: FeedHead = { epoch: 'e1', position: 10, prunedThrough: 0 };
    const feed = {
      head: async () => head,
      async *all() {
        yield [row(1)];
      },
      // The load's catch-up finds nothing: the change below commits after it.
      changedSince: async () => ({ rows: [], head }),
      records: async (ids: readonly number[]) => ids.map((id) => row(id)),
      prune: async () => 0,
    } as unknown as ChangeFeed;

    let release: () => void = () => {};
    const completing = new Promise<void>((resolve) => {
      release = resolve;
    });
    let completingStarted: () => void = () => {};
    const atCompletion = new Promise<void>((resolve) => {
      completingStarted = resolve;
    });
    const applied: { ids: number[]; complete: boolean }[] = [];
    const nginx = {
      state: async () => state(null),
      load: async () => state('loading'),
      apply: async (changes: KeyTableChange[], _at: string, complete = false) => {
        applied.push({ ids: changes.map((c) => c.id), complete });
        if (complete) {
          completingStarted();
          await completing;
          return state('complete');
        }
        return state('loading');
      },
    } as unknown as NginxKeyTable;
    const markers: DecisionInvalidator = {
      clients: async () => true,
      all: async () => true,
      created: async () => true,
    };

    const replicator = new KeyTableReplicator(feed, nginx, markers, silentLogger);
    const resumed = replicator.resume();
    await atCompletion;
    // Client 2 changes (say, deleted) now: its notice arrives while nginx completes the load.
    const notice = replicator.wrap().clients([2]);
    release();
    await Promise.all([resumed, notice]);
    await replicator.settled();

    expect(replicator.status().phase).toBe('complete');
    const completion = applied.findIndex((a) => a.complete);
    expect(completion).toBeGreaterThanOrEqual(0);
    expect(applied.slice(completion + 1).some((a) => a.ids.includes(2))).toBe(true);
  });
});
