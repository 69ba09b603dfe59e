import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { freshDatabase, statisticsReported } from '../../support/database.js';
import { freePort } from '../../support/embedded-postgres.js';
import { http } from '../../support/http.js';
import { CLIENTS } from '../../support/management.js';
import { type TestProof, testProof } from '../../support/nginx-proof.js';
import { type RunningProcess, startProcess } from '../../support/process.js';
import { apk as apkOnly } from '../../support/sidecar.js';

/**
 * Issue 15 at a size CI affords: 10^5 clients, the built sidecar in its own process (so its
 * RSS is its own, not the test's), listing everything while its memory is sampled from /proc
 * and while never-seen keys ask /auth.
 */
const MAIN = join(import.meta.dirname, '../../../dist/sidecar/main.js');
const ROWS = 100_000;

let proc: RunningProcess;
let db: string;
let url: string;
let adminKey: string;
let keys: string[];
let proof: TestProof;
/** The key, with the proof nginx would show (this test asks the sidecar as nginx does). */
const apk = (key: string) => ({ ...proof.header, ...apkOnly(key) });

beforeAll(async () => {
  db = await freshDatabase();
  proof = await testProof();
  const port = await freePort();
  proc = startProcess(process.execPath, [MAIN], {
    PATH: process.env.PATH,
    DATABASE_URL: db,
    PORT: String(port),
    API_KEY_CREATE: 'true',
    // Not the default 9464: other suites' sidecars run at the same time.
    METRICS_LISTEN: 'off',
    ...proof.env,
  });
  await proc.waitFor(/sidecar listening/);
  url = `http://127.0.0.1:${port}`;
  adminKey = /NEWLY GENERATED API KEY: (\S+)/.exec(proc.stdout())![1]!;
  const client = new pg.Client({ connectionString: db });
  await client.connect();
  try {
    await client.query(
      `INSERT INTO api_clients (name, is_admin, api_client_id, key_hash)
       SELECT 'bulk-' || lpad(g::text, 6, '0'), false, 'subject-' || g, NULL
       FROM generate_series(1, $1::int) AS g`,
      [ROWS],
    );
    await client.query('ANALYZE api_clients');
  } finally {
    await client.end();
  }
  keys = [];
  for (let i = 0; i < 120; i += 1) {
    const created = await http(`${url}${CLIENTS}`, {
      method: 'POST',
      headers: apk(adminKey),
      json: { name: `probe-${i}`, is_admin: false, generate_api_key: true },
    });
    expect(created.status, created.text).toBe(201);
    keys.push((created.json as { token: string }).token);
  }
}, 120_000);
afterAll(() => proc?.stop());

/** RSS growth a list of everything may cost the sidecar, MB. */
const MAX_GROWTH_MB = 50;

function rssMb(): number {
  const status = readFileSync(`/proc/${proc.child.pid}/status`, 'utf8');
  return Number(/^VmRSS:\s+(\d+)/m.exec(status)![1]) / 1024;
}

/** Lists every client; `pauseMs` after the first chunk, as a slow caller would. */
function listAll(pauseMs = 0): Promise<{ status: number; bytes: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}${CLIENTS}`, { headers: apk(adminKey) }, (res) => {
      const chunks: Buffer[] = [];
      let paused = false;
      res.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        if (pauseMs > 0 && !paused) {
          paused = true;
          res.pause();
          setTimeout(() => res.resume(), pauseMs);
        }
      });
      res.on('error', reject);
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode ?? 0, bytes: Buffer.byteLength(text), text });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

/** Samples the sidecar's RSS every 10 ms while `work` runs; the highest sample. */
async function peakRssDuring<T>(work: Promise<T>): Promise<{ peak: number; result: T }> {
  let peak = rssMb();
  const timer = setInterval(() => {
    peak = Math.max(peak, rssMb());
  }, 10);
  try {
    const result = await work;
    return { peak: Math.max(peak, rssMb()), result };
  } finally {
    clearInterval(timer);
  }
}

describe(`${ROWS} clients`, () => {
  test('a list of everything streams in constant memory, also to a caller that stalls', async () => {
    const warm = await listAll(); // JIT and pools warmed; the baseline is the process at rest after
    expect(warm.status).toBe(200);
    const before = rssMb();
    const { peak, result } = await peakRssDuring(listAll());
    const body = JSON.parse(result.text) as {
      items: unknown[];
      response_metadata: { total: number };
    };
    expect(body.items).toHaveLength(ROWS + 121);
    expect(body.response_metadata.total).toBe(ROWS + 121);
    // A body of about 16 MB; building it in memory (as before issue 15) took over 150 MB more.
    expect(result.bytes).toBeGreaterThan(15_000_000);
    // The bound the gateway states for a list of everything (issue 23: RSS growth ≤ 50 MB). It
    // was 40 here; with each record's rate limit the body grew, and a stalled caller's run
    // measured 41 MB once in CI: RSS counts garbage V8 has not collected yet.
    expect(peak - before).toBeLessThan(MAX_GROWTH_MB);
    // A caller that stops reading for 2 s: the sidecar waits for it instead of buffering the
    // rest. Its growth from the RSS at its own start: measured from `before`, it also counted
    // the first list's garbage not yet collected (15-32 MB here; 54 MB in all once in CI).
    const beforeStalled = rssMb();
    const stalled = await peakRssDuring(listAll(2_000));
    expect(stalled.result.status).toBe(200);
    expect(stalled.peak - beforeStalled).toBeLessThan(MAX_GROWTH_MB);
  }, 60_000);

  test('a caller that hangs up mid-list stops the reading: no more batches are queried', async () => {
    const commits = async () => {
      const client = new pg.Client({ connectionString: db });
      await client.connect();
      try {
        const { rows } = await client.query<{ n: string }>(
          'SELECT xact_commit::text AS n FROM pg_stat_database WHERE datname = current_database()',
        );
        return Number(rows[0]!.n);
      } finally {
        await client.end();
      }
    };
    // Waited out on both sides, or the earlier tests' lists land in the window.
    await statisticsReported();
    const before = await commits();
    await new Promise<void>((resolve, reject) => {
      const req = request(`${url}${CLIENTS}`, { headers: apk(adminKey) }, (res) => {
        res.once('data', () => {
          req.destroy();
          resolve();
        });
      });
      req.on('error', (err) =>
        (err as NodeJS.ErrnoException).code === 'ECONNRESET' ? resolve() : reject(err),
      );
      req.end();
    });
    // A full list is 200+ queries.
    await statisticsReported();
    expect((await commits()) - before).toBeLessThan(60);
    // And the sidecar goes on serving lists.
    expect((await listAll()).status).toBe(200);
  }, 60_000);

  test('never-seen keys get their /auth answer while a list of everything streams', async () => {
    const probe = async (key: string) => {
      const started = performance.now();
      const res = await http(`${url}/auth`, { headers: apk(key) });
      expect(res.status).toBe(204);
      return performance.now() - started;
    };
    let listing = true;
    const list = listAll().finally(() => {
      listing = false;
    });
    // Awaited below; a failed probe must not leave it rejected and unhandled.
    list.catch(() => undefined);
    // Give the list a head start, then ask with fresh keys one at a time until it ends.
    await new Promise((r) => setTimeout(r, 50));
    const during: number[] = [];
    for (const key of keys) {
      if (!listing) break;
      during.push(await probe(key));
    }
    expect((await list).status).toBe(200);
    // Answered one after another while the list was still being written: a handler that built
    // the whole list on the event loop held /auth until it was done, so at most one probe
    // would finish while listing. (How fast they are is the scale bench's figure, not a test's.)
    expect(during.length).toBeGreaterThanOrEqual(5);
  }, 60_000);

  test('total beyond 10,000 is an estimate close to the count; a page deep in costs what the first does', async () => {
    const page = async (query: string) => {
      const started = performance.now();
      const res = await http(`${url}${CLIENTS}${query}`, { headers: apk(adminKey) });
      expect(res.status).toBe(200);
      return {
        ms: performance.now() - started,
        body: res.json as { response_metadata: { total: number } },
      };
    };
    const first = await page('?limit=100');
    expect(first.body.response_metadata.total).toBeGreaterThan(10_000);
    expect(Math.abs(first.body.response_metadata.total - ROWS) / ROWS).toBeLessThan(0.1);
    const cursor = Buffer.from(
      JSON.stringify({ s: 'name', d: 'a', k: ['bulk-090000', 1] }),
    ).toString('base64url');
    const timings = { first: [] as number[], deep: [] as number[] };
    for (let i = 0; i < 20; i += 1) {
      timings.first.push((await page('?sort=name&limit=100')).ms);
      timings.deep.push((await page(`?limit=100&cursor=${cursor}`)).ms);
    }
    const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    expect(median(timings.deep)).toBeLessThan(median(timings.first) * 3 + 5);
  }, 60_000);
});
