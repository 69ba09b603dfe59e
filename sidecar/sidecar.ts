import { listen } from '../common/listen.js';
import { recordAuditEvent } from './audit/audit-log.js';
import { AuthFailureCounter } from './audit/auth-failure-counter.js';
import { observers } from './auth/auth-observer.js';
import { createBootstrapKeyIfAsked } from './bootstrap.js';
import { ListThread } from './clients/listing/thread.js';
import { LastUsedRecorder } from './clients/store/last-used.js';
import { ClientStore } from './clients/store/writes.js';
import type { Clock } from './clock.js';
import { DEFAULT_PROOF_FILE, type SidecarConfig } from './config.js';
import { migrate } from './db/migrate.js';
import { createPool } from './db/pool.js';
import type { Logger } from './log.js';
import { createMetricsServer } from './metrics/metrics-server.js';
import { registerNginxCounters } from './metrics/nginx-counters.js';
import { instrumentPools } from './metrics/pool-metrics.js';
import { checkReadiness, type RateLimitStoreReport, type Readiness } from './metrics/readiness.js';
import { SidecarMetrics } from './metrics/sidecar-metrics.js';
import { NginxControl } from './nginx/control.js';
import { NO_INVALIDATOR } from './nginx/invalidator.js';
import { NginxKeyTable } from './nginx/key-table.js';
import { checkNginx } from './nginx/readiness.js';
import { readOidcSettings } from './oidc/settings.js';
import { OidcBearerVerifier } from './oidc/verifier.js';
import { FileProofGate } from './proof/file-proof-gate.js';
import type { ProofGate } from './proof/proof-gate.js';
import { FleetSync } from './ratelimit/fleet-sync.js';
import { OverAdmissionMeter } from './ratelimit/over-admission-meter.js';
import { clearStoreFlagAtStart } from './ratelimit/store-flag.js';
import { readRateLimitStoreSettings } from './ratelimit/store-settings.js';
import { ChangeFeed } from './replica/change-feed.js';
import { registerKeyTableMetrics } from './replica/key-table-metrics.js';
import { KeyTableReplicator } from './replica/replicator.js';
import { ChangeListener } from './revocation/change-listener.js';
import { createSidecarServer } from './server.js';
import { SettingsStore } from './settings/settings-store.js';
import { parseSpansListen } from './tracing/nginx-spans.js';
import { type RunningTracing, startTracing } from './tracing/start-tracing.js';
import { readNginxSpansListen, readTracingEndpoint } from './tracing/tracing-settings.js';
import { UsagePruner } from './usage/usage-pruner.js';
import { UsageRecorder } from './usage/usage-recorder.js';
import { readUsageSettings } from './usage/usage-settings.js';

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
  /** Time for token and key expiry, grace periods and OIDC cache ages; tests move it. */
  clock?: Clock;
  /** How often failure counts are written (ms); default 5 s. */
  failureFlushMs?: number;
  /**
   * Who is nginx; default: whoever shows the secret of config.proofFile. Tests that ask the
   * sidecar directly, standing in for nginx, pass their own.
   */
  proof?: ProofGate;
}

/** Waits for the database (retrying: containers may start in any order), migrates, serves. */
export async function startSidecar(
  config: SidecarConfig,
  {
    log,
    env = process.env,
    print = (line) => process.stdout.write(`${line}\n`),
    clock = Date.now,
    failureFlushMs,
    proof: givenProof,
  }: StartOptions,
): Promise<RunningSidecar> {
  // Read first: a bad OIDC_* value stops the start-up before anything waits for the database.
  const oidc = readOidcSettings(env);
  const usage = readUsageSettings(env);
  const rateLimitStore = readRateLimitStoreSettings(env);
  const tracingEndpoint = readTracingEndpoint(env);
  const spansListen = readNginxSpansListen(env);
  const nginxSpans = spansListen === null ? null : parseSpansListen(spansListen);
  // The SDK is loaded only now, and only with an endpoint (tracing off: nothing of it).
  const tracing: RunningTracing | null = tracingEndpoint
    ? await startTracing(tracingEndpoint, log, nginxSpans)
    : null;
  // Read before serving; a file not there yet (the proxy makes it, and may start second) is
  // read again once a request is refused for it.
  const proof =
    givenProof ?? (await FileProofGate.open(config.proofFile ?? DEFAULT_PROOF_FILE, log, clock));
  // The auth pool's named statements are the /auth look-ups: one plan each, made once. Its
  // last two connections stay open, so a miss after a quiet spell does not wait for a new one.
  const pool = createPool(config.databaseUrl, log, { genericPlans: true, min: 2 });
  // Management gets its own, smaller pool: /auth never queues for a connection behind it.
  const managementPool = createPool(config.databaseUrl, log, { max: 4 });
  // So do the writes made after answering (last use, failure and usage counts): a look-up
  // never waits behind one, nor opens a connection because one holds its own through a
  // commit (docs/decisions/20261127-background-writes-pool.md).
  const writesPool = createPool(config.databaseUrl, log, { max: 2, asyncCommit: true });
  // The key table's loads and change reads (replica/replicator.ts): one connection, used only
  // with an nginx to keep.
  const replicaPool = createPool(config.databaseUrl, log, { max: 1 });
  // Whole listings are read on a thread of their own (and its own connections): their
  // megabytes of text never pause /auth for the collector (20261127-listing-thread.md).
  const listings = new ListThread(config.databaseUrl, log);
  listings.start();
  const metrics = new SidecarMetrics();
  instrumentPools(metrics, {
    auth: pool,
    management: managementPool,
    writes: writesPool,
    replica: replicaPool,
  });
  if (config.controlSocket) registerNginxCounters(metrics, config.controlSocket);
  // Up before the database wait: live at once, and ready (200) only once migrated, serving
  // and, with an nginx to push to, while that nginx answers; not ready from the moment it stops.
  let serving = false;
  let stopping = false;
  // rate_limits.store redis: how the sync with Redis fares (null: local).
  let storeReport: () => RateLimitStoreReport | null = () => null;
  // A ready pair's answer carries the store's figures beside it (`rate_limit_store`): an
  // operator reading /readyz sees up, lag and over-admission without a scrape.
  const readiness = async (): Promise<Readiness> => {
    const state = await pairReadiness();
    const store = storeReport();
    return state.ready && store ? { ...state, rateLimitStore: store } : state;
  };
  const pairReadiness = async (): Promise<Readiness> => {
    if (stopping) return { ready: false, code: 'STOPPING', message: 'The sidecar is stopping.' };
    const [database, nginx] = await Promise.all([
      checkReadiness(pool),
      config.controlSocket ? checkNginx(config.controlSocket) : ({ ready: true } as const),
    ]);
    // The database is every pair's: once this sidecar has served, losing it takes no pair out
    // of a balancer (that would refuse every caller, not only the misses); nginx's decisions
    // keep passing and misses are answered 503 JSON until it is back. Only a start waits for it.
    if (!database.ready && !(serving && database.code === 'DATABASE_UNREACHABLE')) return database;
    if (!nginx.ready) return nginx;
    // A pair whose nginx has not loaded the key table yet decides correctly, but asks this
    // sidecar about every caller: a balancer does better with a loaded peer meanwhile.
    const phase = replicator?.status().phase;
    if (phase === 'unknown' || phase === 'loading') {
      return {
        ready: false,
        code: 'KEY_TABLE_LOADING',
        message: "nginx's key table is not loaded yet.",
      };
    }
    if (!serving)
      return { ready: false, code: 'STARTING', message: 'The sidecar is still starting.' };
    if (!database.ready) return { ready: true, degraded: database };
    // Redis away: the pair still serves, degraded (each pair enforces the whole limit alone,
    // or, closed, refuses every rate-limited client; clients without a limit pass either way).
    if (storeReport()?.up === false) {
      return {
        ready: true,
        degraded: {
          code: 'RATE_LIMIT_STORE_UNREACHABLE',
          message:
            rateLimitStore.onFailure === 'closed'
              ? 'Redis cannot be reached: rate-limited clients are refused until it is back.'
              : 'Redis cannot be reached: rate limits are enforced per pair until it is back.',
        },
      };
    }
    return database;
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
  await createBootstrapKeyIfAsked(env, {
    store: new ClientStore(pool),
    settings: new SettingsStore(pool),
    log,
    print,
    clock,
    // The refusal is audited outside any transaction: it changed nothing.
    onRefuse: ({ reason, adminCount }) =>
      recordAuditEvent(pool, {
        action: 'bootstrap_key.refuse',
        outcome: 'failure',
        actor: { apiKeyId: null, name: null, authMethod: 'bootstrap' },
        targetId: null,
        requestId: null,
        sourceAddress: null,
        details: { reason, admin_clients: adminCount },
      }),
  });
  const control = config.controlSocket
    ? new NginxControl(config.controlSocket, log, metrics.revocationFailures)
    : null;
  // nginx's replica of the key table, kept by this sidecar: loaded when nginx has none, then
  // every change as a record (docs/decisions/20261127-key-table-replica.md). Its reads have a
  // connection of their own; its heartbeat runs on the LISTEN connection.
  const replicator =
    control && config.controlSocket
      ? new KeyTableReplicator(
          new ChangeFeed(replicaPool),
          new NginxKeyTable(config.controlSocket),
          control,
          log,
        )
      : null;
  if (replicator) registerKeyTableMetrics(metrics, () => replicator.status());
  const invalidator = replicator?.wrap() ?? control ?? NO_INVALIDATOR;
  // Revocation is pushed to nginx: this sidecar's own changes at once, everyone's through
  // LISTEN. Started before serving; /auth does not wait for it (nginx's bound covers a gap).
  const listener = new ChangeListener({
    databaseUrl: config.databaseUrl,
    invalidator,
    log,
    metrics,
    follower: replicator,
  });
  listener.start();
  replicator?.start();
  // Written off the /auth path: last use at most once a minute per client, failure counts
  // every few seconds (docs/decisions/20261123-key-lifecycle.md, 20261123-audit-trail.md).
  const lastUsed = new LastUsedRecorder(new ClientStore(writesPool), log, clock);
  const failures = new AuthFailureCounter(writesPool, log, clock, {
    ...(failureFlushMs !== undefined ? { flushMs: failureFlushMs } : {}),
    ...(control ? { nginx: control } : {}),
  });
  failures.start();
  // Requests per client: nginx counts them, this sidecar writes its nginx's counts per minute
  // and every sidecar prunes past the retention (docs/decisions/20261125-rate-limits-and-usage.md).
  const recorder = control ? new UsageRecorder(writesPool, control, log, usage.flushMs) : null;
  recorder?.start();
  // rate_limits.store redis: this pair's limit counts exchanged with the fleet's
  // (docs/decisions/20261202-global-rate-limits.md).
  const fleet =
    rateLimitStore.store === 'redis' && config.controlSocket
      ? new FleetSync(
          rateLimitStore,
          config.controlSocket,
          log,
          metrics,
          clock,
          // Its reads of the clients' limits are background work, like the writes after answering.
          new OverAdmissionMeter(writesPool, log, metrics),
        )
      : null;
  fleet?.start();
  if (fleet) storeReport = () => fleet.report();
  // Any other store: a closed flag an earlier sidecar left in nginx (RATE_LIMITS_ON_FAILURE
  // closed, then changed) is cleared, or limited clients would be refused for ever.
  const stopClear =
    !fleet && config.controlSocket ? clearStoreFlagAtStart(config.controlSocket) : null;
  const pruner = new UsagePruner(
    writesPool,
    log,
    usage.retentionDays,
    usage.pruneIntervalMs,
    clock,
  );
  pruner.start();
  const server = createSidecarServer({
    pool,
    managementPool,
    log,
    proof,
    invalidator,
    metrics,
    bearer: (clients) => new OidcBearerVerifier(oidc, clients, log, clock, metrics),
    observer: observers(lastUsed, failures),
    clock,
    listings,
    heldClients: replicator,
  });
  const url = await listen(server, config.listen);
  serving = true;
  log.info('sidecar listening', { url });
  return {
    url,
    metricsUrl,
    async close() {
      stopping = true;
      await listener.stop();
      await replicator?.stop();
      if (metricsServer) {
        metricsServer.close();
        metricsServer.closeAllConnections();
      }
      // No new connection; idle kept-alive ones go now, and every request already received is
      // answered (nginx is waiting for it) before the rest close, at most CLOSE_GRACE_MS.
      await new Promise<void>((resolve) => {
        const force = setTimeout(() => server.closeAllConnections(), CLOSE_GRACE_MS);
        server.close(() => {
          clearTimeout(force);
          resolve();
        });
        server.closeIdleConnections();
      });
      // Once nobody can ask this sidecar, nginx must not go on answering from what it said:
      // every request then fails closed until a sidecar is back.
      await invalidator.all();
      // What was noted in memory goes to the database before the pools close.
      await Promise.all([
        lastUsed.close(),
        failures.close(),
        recorder?.close(),
        pruner.stop(),
        fleet?.stop(),
        stopClear?.(),
      ]);
      await Promise.all([
        pool.end(),
        managementPool.end(),
        writesPool.end(),
        replicaPool.end(),
        listings.close(),
      ]);
      // The last spans are sent once everything that could start one has stopped.
      await tracing?.shutdown();
    },
  };
}

/** How long a stopping sidecar lets the requests it has received finish. */
const CLOSE_GRACE_MS = 5_000;

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
