import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { FIGURE_IDS } from '../../bench/report/figures.js';

const MAIN = join(import.meta.dirname, '../../dist/bench/main.js');

interface Flood {
  failed: string[];
  requests: number;
  statuses: Record<string, number>;
}
interface Http2 {
  apk: { requests: number; errors: number };
  baseline: { requests: number; errors: number };
  moduleHits: number | null;
}
interface DuringList {
  lists: number;
  probes: number;
  rss: { growth: number };
}

let out: string | undefined;
afterAll(async () => {
  if (out) await rm(out, { recursive: true, force: true });
});

/** Issue 23's rows: the check against FIGURE_IDS below would not notice one dropped from it. */
const MISS_PATH_IDS = [
  'fast_apk_throughput',
  'fast_apk_p99_added_max_rate',
  'fast_cache_off_throughput',
  'fast_flood_ratio',
  'fast_bearer_throughput',
  'fast_created_first_request_p99',
  'fast_idle_chain_p99',
  'fast_bearer_first_sight_p99',
  'fast_distinct_keys_throughput',
  'fast_distinct_keys_large_throughput',
  'fast_balancer_flood_ratio',
  'fast_first_request_during_list_p99',
  'fast_list_sidecar_rss_growth',
  'revocation_worst',
  // Issue 49: the seen key over HTTP/2.
  'fast_h2_apk_throughput',
];

// A smoke test of the harness (npm run bench -- --quick): it runs to the end, produces every
// figure of the table (issue 7's engine rows, issue 10's fast rows, issue 23's miss path) as
// JSON, and leaves nothing behind. Timings never decide here: pass/fail of a target is the
// bench's report, not this test's.
test('npm run bench --quick produces every figure as JSON and cleans up', async () => {
  expect(existsSync(MAIN), 'run `npm run build` first').toBe(true);
  expect(FIGURE_IDS).toEqual(expect.arrayContaining(MISS_PATH_IDS));
  out = await mkdtemp(join(tmpdir(), 'gw-bench-smoke-'));
  const { code, stdout, stderr } = await new Promise<{
    code: number | null;
    stdout: string;
    stderr: string;
  }>((resolve) => {
    execFile(
      process.execPath,
      [MAIN, '--quick', '--out', out!],
      { timeout: 290_000, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) =>
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
  expect(code, `${stdout}\n${stderr}`).toBe(0);

  // One results file per run, named by its start time.
  const files = (await readdir(out)).filter((f) => f.endsWith('.json'));
  expect(files).toHaveLength(1);
  const results = JSON.parse(await readFile(join(out, files[0]!), 'utf8')) as {
    commit: string;
    machine: Record<string, unknown>;
    processes: { name: string; argv: string[] }[];
    figures: { id: string; measured: unknown; target: unknown; pass: unknown }[];
    details: { fast: { throughput: { flood: Flood }; duringList: DuringList; http2: Http2 } };
  };
  expect(results.figures.map((f) => f.id).sort()).toEqual([...FIGURE_IDS].sort());
  for (const figure of results.figures) {
    expect(Number.isFinite(figure.measured), `${figure.id}: ${figure.measured}`).toBe(true);
    expect(typeof figure.target).toBe('string');
    expect([true, false, null]).toContain(figure.pass);
  }
  // The flood ran beside every flooded run and counted every answer it got, whatever status
  // the gateway chose; the list-alls ran while the fresh keys were presented.
  const { flood } = results.details.fast.throughput;
  const { duringList } = results.details.fast;
  expect(flood.failed).toEqual([]);
  expect(flood.requests).toBeGreaterThan(0);
  expect(Object.values(flood.statuses).reduce((a, n) => a + n, 0)).toBe(flood.requests);
  expect(duringList.lists).toBeGreaterThan(0);
  expect(duringList.probes).toBeGreaterThan(0);
  expect(Number.isFinite(duringList.rss.growth)).toBe(true);
  // The HTTP/2 row: every request answered on both sides, and every one of the gateway's a hit
  // of the nginx module (issue 49).
  const { http2 } = results.details.fast;
  expect(http2.apk.requests).toBeGreaterThan(0);
  expect(http2.baseline.requests).toBeGreaterThan(0);
  expect(http2.apk.errors + http2.baseline.errors).toBe(0);
  expect(http2.moduleHits).toBe(http2.apk.requests);
  // What each measured process ran as: the sidecars as `node <dist>/sidecar/main.js`.
  const sidecars = results.processes.filter((p) => p.name.startsWith('sidecar '));
  expect(sidecars.map((p) => p.name).sort()).toEqual(['sidecar A', 'sidecar B']);
  for (const { argv } of sidecars)
    expect(argv.slice(1)).toEqual([expect.stringMatching(/dist\/sidecar\/main\.js$/)]);
  for (const key of ['cpu', 'cores', 'memoryGb', 'node', 'nginx', 'wrk']) {
    expect(results.machine[key], key).toBeTruthy();
  }
  // Every figure is also in the printed table.
  for (const id of FIGURE_IDS) expect(stdout).toContain(`${id}:`);
  // The run's temporary directory (gateway homes, PostgreSQL data, baseline) is gone.
  const temp = /temporary files in (\S+)\)/.exec(stdout)?.[1];
  expect(temp).toBeDefined();
  expect(existsSync(temp!)).toBe(false);
}, 330_000);
