import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { CONTROL } from '../../../common/contract.js';
import { silentLogger } from '../../../sidecar/log.js';
import { SidecarMetrics } from '../../../sidecar/metrics/sidecar-metrics.js';
import { FleetSync } from '../../../sidecar/ratelimit/fleet-sync.js';
import { readRateLimitStoreSettings } from '../../../sidecar/ratelimit/store-settings.js';
import { type RunningRedis, startRedis } from '../../support/redis-server.js';

// The sidecar's side of RATE_LIMITS_ON_FAILURE (sidecar/ratelimit/store-flag.ts): what it asks
// of nginx's control socket, in order, against a real Redis and a stand-in nginx that records
// every request (nginx's side, and the twins reading the flag, are test/e2e's).

let redis: RunningRedis;
let dir: string;
let nginx: Server;
let socket: string;
const seen: string[] = [];

beforeAll(async () => {
  redis = await startRedis();
  dir = await mkdtemp(join(tmpdir(), 'gw-fleet-flag-'));
  socket = join(dir, 'control.sock');
  nginx = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      seen.push(`${req.method} ${req.url}`);
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      res.end('');
    });
  });
  await new Promise<void>((resolve) => nginx.listen(socket, resolve));
});
afterAll(async () => {
  await new Promise((resolve) => nginx?.close(resolve));
  await redis?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const SYNC_MS = 100;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function until(what: string, check: () => boolean, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms (${seen})`);
    await sleep(20);
  }
}
const flagWrites = () => seen.filter((s) => s.includes('closed='));
const CLOSE = `POST ${CONTROL.limits}?list=0&closed=1`;
const OPEN = `POST ${CONTROL.limits}?list=0&closed=0`;
const READ = `POST ${CONTROL.limits}`;

function fleet(onFailure: string): FleetSync {
  const settings = readRateLimitStoreSettings({
    RATE_LIMITS_STORE: 'redis',
    RATE_LIMITS_REDIS_URL: redis.url,
    RATE_LIMITS_SYNC_MS: String(SYNC_MS),
    RATE_LIMITS_ON_FAILURE: onFailure,
  });
  return new FleetSync(settings, socket, silentLogger, new SidecarMetrics());
}

describe('RATE_LIMITS_ON_FAILURE=closed', () => {
  test('closed from the start until a sync works, cleared once, closed again at every failed sync, cleared when Redis is back', async () => {
    seen.length = 0;
    const sync = fleet('closed');
    sync.start();
    try {
      await until('cleared', () => seen.includes(OPEN));
      // Set before anything else, cleared only after a read of nginx's windows (and Redis).
      expect(seen[0]).toBe(CLOSE);
      const cleared = seen.indexOf(OPEN);
      expect(seen.slice(1, cleared)).toContain(READ);
      await sleep(5 * SYNC_MS);
      const writes = flagWrites();
      const opened = writes.indexOf(OPEN);
      // Closed (again, had Redis not been connected yet at the first sync) until then; while
      // Redis answers, nothing more.
      expect(new Set(writes.slice(0, opened))).toEqual(new Set([CLOSE]));
      expect(writes.slice(opened + 1)).toEqual([]);
      await redis.stop();
      await until('closed at each failed sync', () => flagWrites().length >= opened + 4);
      expect(new Set(flagWrites().slice(opened + 1))).toEqual(new Set([CLOSE]));
      await redis.start();
      await until('cleared again', () => flagWrites().at(-1) === OPEN);
      expect(sync.storeUp).toBe(true);
    } finally {
      await sync.stop();
    }
  });
});

describe('RATE_LIMITS_ON_FAILURE=local', () => {
  test('the flag is cleared at start and never set, Redis away or not', async () => {
    seen.length = 0;
    const sync = fleet('local');
    sync.start();
    try {
      await until('a sync', () => seen.includes(READ));
      await redis.stop();
      await until('Redis seen away', () => sync.storeUp === false);
      await sleep(3 * SYNC_MS);
      expect(flagWrites()).toEqual([OPEN]);
    } finally {
      await sync.stop();
      await redis.start();
    }
  });
});
