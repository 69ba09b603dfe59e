import { execFile } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { packageRoot } from '../../common/package-root.js';
import type { ReplicasStack } from '../../test/support/replicas-stack.js';
import { failures, type LoadTally, steadyLoad } from '../../test/support/steady-load.js';

export interface ReplicasRollingRestart {
  /** How long docker/rolling-restart.sh took for the three pairs. */
  restartS: number;
  /** Everything the callers sent, from before the restart until they reached the minimum. */
  tally: LoadTally;
  failed: number;
}

const ROOT = packageRoot();

/**
 * Callers through the balancer (as the container suite's, test/support/steady-load.ts) while
 * docker/rolling-restart.sh replaces every pair; they go on after it until they have sent at
 * least `minimum` requests, so a fast restart still counts that many.
 */
export async function measureRollingRestart(
  stack: ReplicasStack,
  options: { concurrency: number; minimum: number },
): Promise<ReplicasRollingRestart> {
  const load = steadyLoad({
    url: `https://localhost:${stack.port}/api`,
    headers: { Authorization: `apk ${stack.adminKey}` },
    ca: stack.ca,
    servername: 'localhost',
    concurrency: options.concurrency,
  });
  await new Promise((r) => setTimeout(r, 1_000));
  const t0 = performance.now();
  try {
    await new Promise<void>((resolve, reject) => {
      execFile(
        'bash',
        ['docker/rolling-restart.sh'],
        {
          cwd: ROOT,
          env: { ...stack.env, COMPOSE: stack.composeCommand },
          timeout: 600_000,
          maxBuffer: 16 * 1024 * 1024,
        },
        (err, _stdout, stderr) =>
          err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(),
      );
    });
  } catch (err) {
    await load.stop();
    throw err;
  }
  const restartS = (performance.now() - t0) / 1000;
  while (load.tally.requests < options.minimum) await new Promise((r) => setTimeout(r, 200));
  const tally = await load.stop();
  return { restartS, tally, failed: failures(tally) };
}
