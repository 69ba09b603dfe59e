import { listen } from '../common/listen.js';
import { createBootstrapKeyIfAsked } from './bootstrap.js';
import { ClientStore } from './clients/client-store.js';
import type { SidecarConfig } from './config.js';
import { migrate } from './db/migrate.js';
import { createPool } from './db/pool.js';
import type { Logger } from './log.js';
import { createMetricsServer } from './metrics/metrics-server.js';
import { registerNginxCounters } from './metrics/nginx-counters.js';
import { instrumentPools } from './metrics/pool-metrics.js';
import { checkReadiness, type Readiness } from './metrics/readiness.js';
import { SidecarMetrics } from './metrics/sidecar-metrics.js';
import { type Clock, readOidcSettings } from './oidc/settings.js';
import { OidcBearerVerifier } from './oidc/verifier.js';
import { ChangeListener } from './revocation/change-listener.js';
import { NginxControl, NO_INVALIDATOR } from './revocation/nginx-control.js';
import { createSidecarServer } from './server.js';

export interface RunningSidecar {
  /** `http://host:port`, or `unix:/path` for a socket. */
  url: string;
  /** Where `/metrics`, `/livez` and `/readyz` are served; null when METRICS_LISTEN is off. */
  metricsUrl: string | null;
  close(): Promise<void>;
}

export interface StartOptions {
  log: Logger;
  env?: NodeJS.ProcessEnv;
  /** Where the bootstrap line goes; stdout in production. */
  print?: (line: string) => void;
  /** Time for token expiry and OIDC cache ages; tests move it instead of sleeping. */
  clock?: Clock;
}

/** Waits for the database (retrying: containers may start in any order), migrates, serves. */
export async function startSidecar(
  config: SidecarConfig,
  {
    log,
    env = process.env,
    print = (line) => process.stdout.write(`${line}\n`),
    clock = Date.now,
  }: StartOptions,
): Promise<RunningSidecar> {
  // Read first: a bad OIDC_* value stops the start-up before anything waits for the database.
  const oidc = readOidcSettings(env);
  const pool = createPool(config.databaseUrl, log);
  // Management gets its own, smaller pool: /auth never queues for a connection behind it.
  const managementPool = createPool(config.databaseUrl, log, { max: 4 });
  const metrics = new SidecarMetrics();
  instrumentPools(metrics, { auth: pool, management: managementPool });
  if (config.controlSocket) registerNginxCounters(metrics, config.controlSocket);
  // Up before the database wait: live at once, and ready (200) only once migrated and serving.
  let serving = false;
  const readiness = async (): Promise<Readiness> => {
    const state = await checkReadiness(pool);
    if (!state.ready || serving) return state;
    return { ready: false, code: 'STARTING', message: 'The sidecar is still starting.' };
  };
  const metricsServer = config.metricsListen
    ? createMetricsServer({ metrics, readiness, log })
    : null;
  const metricsUrl =
    metricsServer && config.metricsListen
      ? await listen(metricsServer, config.metricsListen)
      : null;
  if (metricsUrl) log.info('metrics listening', { url: metricsUrl });
  await retry(() => migrate(pool, log), log);
  await createBootstrapKeyIfAsked(env, new ClientStore(pool), print);
  const invalidator = config.controlSocket
    ? new NginxControl(config.controlSocket, log, metrics)
    : NO_INVALIDATOR;
  // Revocation is pushed to nginx: this sidecar's own changes at once, everyone's through
  // LISTEN. Started before serving; /auth does not wait for it (nginx's bound covers a gap).
  const listener = new ChangeListener({
    databaseUrl: config.databaseUrl,
    invalidator,
    log,
    metrics,
  });
  listener.start();
  const server = createSidecarServer({
    pool,
    managementPool,
    log,
    invalidator,
    metrics,
    bearer: (clients) => new OidcBearerVerifier(oidc, clients, log, clock, metrics),
  });
  const url = await listen(server, config.listen);
  serving = true;
  log.info('sidecar listening', { url });
  return {
    url,
    metricsUrl,
    async close() {
      await listener.stop();
      if (metricsServer) {
        metricsServer.close();
        metricsServer.closeAllConnections();
      }
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      // Once nobody can ask this sidecar, nginx must not go on answering from what it said:
      // every request then fails closed until a sidecar is back.
      await invalidator.all();
      await Promise.all([pool.end(), managementPool.end()]);
    },
  };
}

async function retry<T>(action: () => Promise<T>, log: Logger): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await action();
    } catch (err) {
      const delay = Math.min(250 * 2 ** (attempt - 1), 5_000);
      log.warn('database not ready; retrying', { attempt, error: (err as Error).message, delay });
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}
