/**
 * `npm run bench:replicas`: issue 20's figures on docker-compose.replicas.yml (three proxy +
 * sidecar pairs behind HAProxy, one PostgreSQL), with the images built from this tree by
 * docker/build-airgapped-images.sh (`--no-build`: the images already tagged, or GW_*_IMAGE):
 *   1. throughput with wrk through the balancer with 3 pairs, with 1 (the others in
 *      maintenance), and straight to one pair: the balancer's cost;
 *   2. revocation on every pair: the worst and median of 100 deletes, one at a time;
 *   3. requests failed during a rolling restart of every pair (at least 20,000 sent).
 * Prints a table, writes bench/output/replicas/<time>.json (ignored by git), and takes the stack down however
 * the run ends. A bench, not a test: nothing here is asserted.
 */

import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { packageRoot } from '../../common/package-root.js';
import { startReplicas } from '../../test/support/replicas-stack.js';
import { codeVersion, writeResults } from '../report/write.js';
import { ensureWrk } from '../wrk/install.js';
import { formatReplicas } from './report.js';
import { measureRevocation } from './revocation.js';
import { measureRollingRestart } from './rolling-restart.js';
import { measureThroughput } from './throughput.js';

const ROOT = packageRoot();
const PODMAN_SOCKET = '/run/podman/podman.sock';
const say = (line: string) => console.error(`bench:replicas: ${line}`);

/** docker/build-airgapped-images.sh: its stdout is `export GW_..._IMAGE=...` lines. */
function buildImages(): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(
      'bash',
      ['docker/build-airgapped-images.sh'],
      { cwd: ROOT, maxBuffer: 64 * 1024 * 1024, timeout: 1_800_000 },
      (err, stdout, stderr) => {
        if (err)
          return reject(new Error(`image build failed: ${err.message}\n${stderr.slice(-4000)}`));
        for (const [, name, value] of stdout.matchAll(/^export (GW_\w+_IMAGE)=(\S+)$/gm)) {
          process.env[name!] = value!.replace(/^['"]|['"]$/g, '');
        }
        resolve();
      },
    );
  });
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  // As the container suite's global setup: podman's socket, no reaper (its image cannot be pulled).
  if (!process.env.DOCKER_HOST && existsSync(PODMAN_SOCKET)) {
    process.env.DOCKER_HOST = `unix://${PODMAN_SOCKET}`;
  }
  process.env.TESTCONTAINERS_RYUK_DISABLED = 'true';
  const startedAt = new Date();
  // The code measured: taken now, not after the run (a commit meanwhile would be named).
  const code = await codeVersion(ROOT);
  if (!argv.includes('--no-build')) {
    say('building the images (docker/build-airgapped-images.sh)');
    await buildImages();
  }
  const wrk = await ensureWrk(say);
  const scriptDir = await mkdtemp(join(tmpdir(), 'gw-bench-replicas-'));
  say('starting docker-compose.replicas.yml');
  const stack = await startReplicas('bench');
  try {
    say('throughput: 3 pairs, 1 pair, straight to a pair');
    const throughput = await measureThroughput(stack, {
      wrk,
      scriptDir,
      seconds: 15,
      connections: 32,
    });
    say('revocation: 100 deletes, one at a time, every pair polled');
    const revocation = await measureRevocation(stack, 100);
    say('rolling restart of the three pairs under 4 callers');
    const rollingRestart = await measureRollingRestart(stack, { concurrency: 4, minimum: 20_000 });
    const result = {
      startedAt: startedAt.toISOString(),
      code,
      machine: { cpus: cpus().length, loadAverage: loadavg() },
      throughput,
      revocation,
      rollingRestart,
    };
    console.log(formatReplicas(result));
    const file = await writeResults(join(ROOT, 'bench/output/replicas'), startedAt, result);
    say(`written ${file}`);
  } finally {
    say('taking the stack down');
    await stack.down();
    await rm(scriptDir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.stack : err);
  process.exitCode = 1;
});
