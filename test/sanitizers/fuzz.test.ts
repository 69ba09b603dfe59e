import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';

// The nginx module's pure parts under libFuzzer, AddressSanitizer and UndefinedBehaviorSanitizer
// (scripts/fuzz-nginx-module.sh, nginx-module/fuzz/): each target for a bounded time from its
// seed corpus in the repository. Any crash, leak, sanitizer report or broken property (the
// targets abort when the module would pass what the Lua code would not parse alike) fails it.
// FUZZ_SECONDS: each target's time (CI: 16 s, six targets).

const ROOT = new URL('../..', import.meta.url).pathname;
const SCRIPT = join(ROOT, 'scripts', 'fuzz-nginx-module.sh');
const SECONDS = Number(process.env.FUZZ_SECONDS ?? 16);
const TARGETS = [
  'fuzz_screen',
  'fuzz_api_key',
  'fuzz_records',
  'fuzz_limit',
  'fuzz_worker_tables',
  'fuzz_path',
];

/** Runs the script (asynchronously: a worker blocked for long misses vitest's calls). */
function script(...args: string[]): Promise<{ status: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', [SCRIPT, ...args]);
    let output = '';
    child.stdout.on('data', (c: Buffer) => {
      output += c.toString();
    });
    child.stderr.on('data', (c: Buffer) => {
      output += c.toString();
    });
    child.on('close', (status) => resolve({ status, output }));
  });
}

beforeAll(async () => {
  const built = await script('build');
  expect(built.status, built.output).toBe(0);
}, 120_000);

/** libFuzzer's final figures: executions, edges covered, features, corpus size. */
function figures(output: string) {
  const done = /#(\d+)\s+DONE\s+cov: (\d+) ft: (\d+) corp: (\d+)/.exec(output);
  return done
    ? {
        runs: Number(done[1]),
        edges: Number(done[2]),
        features: Number(done[3]),
        corpus: Number(done[4]),
      }
    : null;
}

describe('the nginx module under libFuzzer', () => {
  test.each(TARGETS)(
    '%s: no crash, leak or sanitizer report',
    async (target) => {
      const run = await script('run', target, String(SECONDS));
      const output = run.output;
      const found = figures(output);
      // The figures for the record (docs/decisions/20261125-hit-in-c.md quotes a run).
      console.log(`${target}: ${JSON.stringify(found)}`);
      expect(run.status, output.split('\n').slice(-60).join('\n')).toBe(0);
      expect(found, output.slice(-2000)).not.toBeNull();
      expect(found!.runs).toBeGreaterThan(1000);
    },
    (SECONDS + 60) * 1000,
  );
});
