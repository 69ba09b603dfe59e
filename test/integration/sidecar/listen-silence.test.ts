import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { migrate } from '../../../sidecar/db/migrate.js';
import { silentLogger } from '../../../sidecar/log.js';
import type { DecisionInvalidator } from '../../../sidecar/nginx/invalidator.js';
import type { FeedPosition } from '../../../sidecar/replica/change-feed.js';
import type { FeedFollower } from '../../../sidecar/replica/replicator.js';
import { ChangeListener } from '../../../sidecar/revocation/change-listener.js';
import { freshDatabase } from '../../support/database.js';
import {
  type NotificationDropper,
  notificationDropper,
} from '../../support/notification-dropper.js';

// The feed is "live" only while notices arrive (docs/decisions/20261201-no-change-skipped.md).
// A connection that answers queries but delivers no notices (PgBouncer in transaction mode, a
// half-dead socket) is made here by a TCP proxy in front of a real PostgreSQL that drops the
// server's NotificationResponse messages ('A') while told to: the proxy is the test's, the
// database, the triggers and the listener are real.

const silent: DecisionInvalidator = {
  clients: async () => true,
  created: async () => true,
  all: async () => true,
};

describe('heartbeats that must come back through NOTIFY', () => {
  let listener: ChangeListener;
  let proxy: NotificationDropper;
  const beats: FeedPosition[] = [];
  let resumes = 0;

  beforeAll(async () => {
    const url = await freshDatabase();
    const pool = new pg.Pool({ connectionString: url });
    await migrate(pool, silentLogger);
    await pool.end();
    proxy = await notificationDropper(url);
    const follower: FeedFollower = {
      resume: async () => {
        resumes += 1;
      },
      heartbeat: async (head) => {
        beats.push(head);
      },
    };
    listener = new ChangeListener({
      databaseUrl: proxy.url,
      invalidator: silent,
      log: silentLogger,
      follower,
      heartbeatMs: 200,
      maxBackoffMs: 200,
    });
    listener.start();
    await listener.ready;
  });
  afterAll(async () => {
    await listener?.stop();
    proxy?.close();
  });

  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  test('heartbeats come back and are handed to the follower, each with the feed head', async () => {
    await sleep(1_000);
    expect(beats.length).toBeGreaterThanOrEqual(3);
    expect(beats.at(-1)).toEqual({ epoch: expect.stringMatching(/^[0-9a-f]+$/), position: 0 });
  });

  test('a connection that answers queries but delivers no notices is not live: no heartbeat reaches the follower, and it is reconnected and caught up again', async () => {
    const connections = listener.connections;
    const resumed = resumes;
    proxy.state.drop = true;
    await sleep(300);
    const heard = beats.length;
    await sleep(2_000);
    // Queries still work through the proxy (the heartbeats' own NOTIFY is sent); none came back.
    expect(proxy.state.dropped).toBeGreaterThan(0);
    expect(beats.length).toBe(heard);
    // Within three heartbeats it is taken for lost; each new connection is caught up (resume).
    expect(listener.connections).toBeGreaterThan(connections);
    expect(resumes).toBeGreaterThan(resumed);
    proxy.state.drop = false;
    await sleep(1_500);
    expect(beats.length).toBeGreaterThan(heard);
  });
});
