import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { FIGURE_IDS } from '../../bench/report/figures.js';

const MAIN = join(import.meta.dirname, '../../dist/bench/main.js');

let out: string | undefined;
afterAll(async () => {
  if (out) await rm(out, { recursive: true, force: true });
});

// A smoke test of the harness (npm run bench -- --quick): it runs to the end, produces every
// figure of the table (issue 7's engine rows, issue 10's fast rows) as JSON, and leaves nothing
// behind. Timings never decide here: pass/fail of a target is the bench's report, not this test's.
test('npm run bench --quick produces every figure as JSON and cleans up', async () => {
  expect(existsSync(MAIN), 'run `npm run build` first').toBe(true);
  out = await mkdtemp(join(tmpdir(), 'gw-bench-smoke-'));
  const { code, stdout, stderr } = await new Promise<{
    code: number | null;
    stdout: string;
    stderr: string;
  }>((resolve) => {
    execFile(
      process.execPath,
      [MAIN, '--quick', '--out', out!],
      { timeout: 200_000, maxBuffer: 16 * 1024 * 1024 },
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
    figures: { id: string; measured: unknown; target: unknown; pass: unknown }[];
  };
  expect(results.figures.map((f) => f.id).sort()).toEqual([...FIGURE_IDS].sort());
  for (const figure of results.figures) {
    expect(Number.isFinite(figure.measured), `${figure.id}: ${figure.measured}`).toBe(true);
    expect(typeof figure.target).toBe('string');
    expect([true, false, null]).toContain(figure.pass);
  }
  for (const key of ['cpu', 'cores', 'memoryGb', 'node', 'nginx', 'wrk']) {
    expect(results.machine[key], key).toBeTruthy();
  }
  // Every figure is also in the printed table.
  for (const id of FIGURE_IDS) expect(stdout).toContain(`${id}:`);
  // The run's temporary directory (gateway homes, PostgreSQL data, baseline) is gone.
  const temp = /temporary files in (\S+)\)/.exec(stdout)?.[1];
  expect(temp).toBeDefined();
  expect(existsSync(temp!)).toBe(false);
}, 240_000);
