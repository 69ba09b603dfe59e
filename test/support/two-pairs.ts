import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { type RunningPostgres, startEmbeddedPostgres } from './embedded-postgres.js';
import { keyTableLoaded } from './key-table.js';
import { closeAgent, type NativeStack } from './key-table-faults.js';
import { startNativeStack } from './native-stack.js';
import { type NotificationDropper, notificationDropper } from './notification-dropper.js';

/**
 * Two pairs on a PostgreSQL of the caller's own (so a test may stop, restart or restore it):
 * A reaches it directly, B through a proxy that can drop notices (the named stand-in for a
 * pooler in transaction mode). Both hold the whole key table when this resolves.
 */
export interface TwoPairs {
  server: RunningPostgres;
  databaseUrl: string;
  dropper: NotificationDropper;
  a: NativeStack;
  b: NativeStack;
  close(): Promise<void>;
}

export async function startTwoPairs(database: string): Promise<TwoPairs> {
  const dir = await mkdtemp(join(tmpdir(), `gw-${database}-pg-`));
  const server = await startEmbeddedPostgres(dir);
  const admin = new pg.Client({ connectionString: server.adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${database}`);
  await admin.end();
  const databaseUrl = server.adminUrl.replace(/\/postgres$/, `/${database}`);
  const dropper = await notificationDropper(databaseUrl);
  const a = await startNativeStack({ env: { DATABASE_URL: databaseUrl } });
  const b = await startNativeStack({ env: { DATABASE_URL: dropper.url } });
  await keyTableLoaded(a.gateway().metricsUrl);
  await keyTableLoaded(b.gateway().metricsUrl);
  return {
    server,
    databaseUrl,
    dropper,
    a,
    b,
    async close() {
      for (const stack of [a, b]) closeAgent(stack);
      await a.close();
      await b.close();
      dropper.close();
      await server.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
