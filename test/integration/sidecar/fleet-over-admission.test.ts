import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import type { RateLimit } from '../../../sidecar/clients/store/api-client.js';
import { ClientStore } from '../../../sidecar/clients/store/writes.js';
import { migrate } from '../../../sidecar/db/migrate.js';
import { createPool } from '../../../sidecar/db/pool.js';
import { silentLogger } from '../../../sidecar/log.js';
import { SidecarMetrics } from '../../../sidecar/metrics/sidecar-metrics.js';
import { OverAdmissionMeter } from '../../../sidecar/ratelimit/over-admission-meter.js';
import { freshDatabase } from '../../support/database.js';
import { uniqueName } from '../../support/management.js';

// gateway_rate_limit_over_admitted_total from the window totals a sync hands over, with the
// limits read from a real PostgreSQL (sidecar/ratelimit/over-admission-meter.ts). The totals
// come from Redis in a sidecar; here they are given, one sync at a time (the three pairs'
// real totals are test/e2e/global-rate-limits.test.ts's).

let pool: pg.Pool;
let store: ClientStore;

beforeAll(async () => {
  pool = createPool(await freshDatabase(), silentLogger);
  await migrate(pool, silentLogger);
  store = new ClientStore(pool);
});
afterAll(() => pool?.end());

async function client(rateLimit: RateLimit | null): Promise<number> {
  const made = await store.create(
    { name: uniqueName('over'), isAdmin: false, apiClientId: null, rateLimit },
    randomBytes(32),
  );
  if (!made.ok) throw new Error(made.conflict);
  return made.row.id;
}

/**
 * Client `id`'s window of 60 s that holds when a test begins (taken once: a test that crosses
 * a minute still speaks of one window).
 */
let index = 0;
const windowOf = (id: number) => `l${id} 60 ${index}`;
beforeEach(() => {
  index = Math.floor(Date.now() / 60_000);
});

function meter() {
  const metrics = new SidecarMetrics();
  const m = new OverAdmissionMeter(pool, silentLogger, metrics);
  return {
    /** One sync's totals, counted. */
    async sync(totals: Record<string, number>) {
      m.observe(new Map(Object.entries(totals)), Date.now() / 1000);
      await m.idle();
    },
    async metric() {
      const text = await metrics.text();
      return Number(/^gateway_rate_limit_over_admitted_total (\d+)$/m.exec(text)?.[1]);
    },
    get seen() {
      return m.overAdmitted;
    },
  };
}

describe('over-admission counted from the fleet’s totals', () => {
  // Both clients created in the window: a creation is not a change (no limit came before it).
  test('a total past its limit counts what is over, once, and a limit reached but not passed counts nothing', async () => {
    const over = windowOf(await client({ requests: 5, perSeconds: 60 }));
    const reached = windowOf(await client({ requests: 10, perSeconds: 60 }));
    const m = meter();
    await m.sync({ [over]: 3, [reached]: 6 });
    await m.sync({ [over]: 7, [reached]: 10 });
    await m.sync({ [over]: 7, [reached]: 10 });
    expect(await m.metric()).toBe(2);
    await m.sync({ [over]: 9, [reached]: 10 });
    await m.sync({ [over]: 9, [reached]: 10 });
    await m.sync({ [over]: 9, [reached]: 10 });
    expect(await m.metric()).toBe(4);
    expect(m.seen).toBe(4);
  });

  test('a limit raised during the window is read from PostgreSQL again: what it admitted is not over', async () => {
    const id = await client({ requests: 5, perSeconds: 60 });
    const key = windowOf(id);
    const m = meter();
    await m.sync({ [key]: 4 });
    expect((await store.update(id, { rateLimit: { requests: 50, perSeconds: 60 } })).ok).toBe(true);
    await m.sync({ [key]: 30 });
    await m.sync({ [key]: 30 });
    expect(await m.metric()).toBe(0);
  });

  test('a limit lowered during the window: what was admitted under the old one is not over', async () => {
    const seenBefore = await client({ requests: 50, perSeconds: 60 });
    const seenAfter = await client({ requests: 50, perSeconds: 60 });
    const m = meter();
    await m.sync({ [windowOf(seenBefore)]: 6 });
    for (const id of [seenBefore, seenAfter]) {
      expect((await store.update(id, { rateLimit: { requests: 5, perSeconds: 60 } })).ok).toBe(
        true,
      );
    }
    // seenAfter's limit is first read after a change within its window (the feed says so):
    // its 6 may be the old limit's, so it is not counted.
    const totals = { [windowOf(seenBefore)]: 6, [windowOf(seenAfter)]: 6 };
    await m.sync(totals);
    await m.sync(totals);
    expect(await m.metric()).toBe(0);
  });

  test('a client without a limit, a deleted one, or a window of another length: nothing counted', async () => {
    const free = await client(null);
    const deleted = await client({ requests: 1, perSeconds: 60 });
    await store.delete(deleted);
    const other = await client({ requests: 1, perSeconds: 10 });
    const m = meter();
    const totals = { [windowOf(free)]: 9, [windowOf(deleted)]: 9, [windowOf(other)]: 9 };
    await m.sync(totals);
    await m.sync(totals);
    expect(await m.metric()).toBe(0);
  });

  test('PostgreSQL unreachable: nothing counted, nothing thrown; the metric is there at 0', async () => {
    const lost = createPool('postgres://nobody@127.0.0.1:1/none', silentLogger);
    const metrics = new SidecarMetrics();
    const m = new OverAdmissionMeter(lost, silentLogger, metrics);
    try {
      const key = `l1 60 ${Math.floor(Date.now() / 60_000)}`;
      m.observe(new Map([[key, 99]]), Date.now() / 1000);
      await m.idle();
      m.observe(new Map([[key, 99]]), Date.now() / 1000);
      await m.idle();
      expect(await metrics.text()).toMatch(/^gateway_rate_limit_over_admitted_total 0$/m);
    } finally {
      await lost.end();
    }
  });
});
