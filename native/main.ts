import { startNativeGateway } from './gateway.js';
import { gatewayHome, prepareHome } from './home.js';
import { acquireLock } from './lock.js';

/**
 * `npm start`: the whole gateway as local processes, state under GATEWAY_HOME (default
 * `.gateway/`). Prints one line with the HTTPS URL when ready; Ctrl-C stops everything, and so
 * does SIGTERM or SIGINT to the npm process: `npm start` execs this process, so the signal npm
 * forwards lands here, not in a shell that would die and leave the children running.
 */
async function main(): Promise<void> {
  const home = await prepareHome(gatewayHome(process.env.GATEWAY_HOME || '.gateway'));
  const release = await acquireLock(home);
  const say = (line: string) => process.stdout.write(`${line}\n`);
  let stopRequested = false;
  let stopGateway: (() => Promise<void>) | null = null;
  const stop = (signal: string) => {
    if (stopRequested) return;
    stopRequested = true;
    say(`Stopping (${signal})...`);
    // A signal during start-up is handled once start-up has cleaned up after itself.
    if (stopGateway) void stopGateway().finally(() => release().finally(() => process.exit(0)));
  };
  // The runner owns these signals (no other handler may exit at once): it stops the children
  // front to back, nginx first, the database last.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.removeAllListeners(signal);
    process.on(signal, () => stop(signal));
  }

  const gateway = await startNativeGateway({ home, env: process.env, say });
  stopGateway = gateway.stop;
  // The children have their own process groups; if the runner ends any other way than
  // through stop(), they must not outlive it.
  process.on('exit', () => gateway.killNow());
  if (stopRequested) {
    await gateway.stop();
    await release();
    process.exit(0);
  }
  say(`Gateway ready: ${gateway.url} (home ${home.root}; logs in ${home.logs})`);
  const metrics = gateway.metricsUrl;
  say(
    !metrics
      ? 'Metrics: off (METRICS_LISTEN=off)'
      : metrics.startsWith('unix:')
        ? `Metrics: GET /metrics, /livez, /readyz on ${metrics} (local only)`
        : `Metrics: ${metrics}/metrics (health: ${metrics}/livez, ${metrics}/readyz; local only)`,
  );
  // A child that keeps dying ends the run: never a gateway left answering 503 for good.
  const reason = await gateway.failed;
  if (stopRequested) return;
  stopRequested = true;
  process.stderr.write(`gateway: stopping: ${reason}\n`);
  await gateway.stop();
  await release();
  process.exit(1);
}

main().catch((err: unknown) => {
  process.stderr.write(`gateway: ${(err as Error).message}\n`);
  process.exit(1);
});
