import { Counter, Gauge, Histogram, Registry } from 'prom-client';

/** What the provider fetch was for: the discovery document or the key set (JWKS). */
export type OidcResource = 'discovery' | 'jwks';

// Decisions are answered from memory and one indexed query: sub-millisecond to a few ms; the
// upper buckets show a slow database or provider before nginx's timeout does.
const DECISION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];
const QUERY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5, 10];
const PUSH_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

/**
 * The sidecar's Prometheus metrics, in a registry of its own (never prom-client's global one:
 * several sidecars may run in one process in tests). Label values come from closed sets (auth
 * methods, refusal codes, pool names), never from a request: nothing a caller sends, and no
 * credential, can become a label.
 */
export class SidecarMetrics {
  readonly registry = new Registry();

  /** /auth answers: `method` apk, bearer or none; `result` allowed, forbidden, unavailable or a refusal code. */
  readonly authDecisions = new Counter({
    name: 'gateway_auth_decisions_total',
    help: "The sidecar's /auth decisions (nginx's cache misses), by method and result.",
    labelNames: ['method', 'result'] as const,
    registers: [this.registry],
  });

  /**
   * Requests refused because they did not come from the gateway's nginx (no valid proof):
   * `route` auth, frame or management; `reason` missing, malformed, wrong or no_secret.
   * Anything above zero is a peer that reached the sidecar, or a proof file out of step.
   */
  readonly unprovenRequests = new Counter({
    name: 'gateway_sidecar_unproven_requests_total',
    help: 'Requests the sidecar refused without reading them: no valid proof that nginx sent them.',
    labelNames: ['route', 'reason'] as const,
    registers: [this.registry],
  });

  /** Each nginx worker keeps one (lua/gateway/sidecar/mux.lua): a count that climbs means churn. */
  readonly authFrameConnections = new Counter({
    name: 'gateway_auth_frame_connections_total',
    help: 'Connections opened to ask /auth in auth frames (each nginx worker keeps one open and shares it).',
    registers: [this.registry],
  });

  readonly authDuration = new Histogram({
    name: 'gateway_auth_decision_duration_seconds',
    help: 'Time the sidecar took to decide an /auth request.',
    labelNames: ['method'] as const,
    buckets: DECISION_BUCKETS,
    registers: [this.registry],
  });

  readonly revocationLag = new Histogram({
    name: 'gateway_revocation_push_lag_seconds',
    help: 'From receiving a change notification (NOTIFY) to nginx acknowledging the invalidation.',
    buckets: PUSH_BUCKETS,
    registers: [this.registry],
  });

  readonly revocationFailures = new Counter({
    name: 'gateway_revocation_push_failures_total',
    help: 'Invalidations nginx did not acknowledge (the decisions then end at their max age).',
    labelNames: ['scope'] as const,
    registers: [this.registry],
  });

  readonly queryDuration = new Histogram({
    name: 'gateway_db_query_duration_seconds',
    help: 'PostgreSQL query time, by connection pool (auth, management).',
    labelNames: ['pool'] as const,
    buckets: QUERY_BUCKETS,
    registers: [this.registry],
  });

  readonly oidcFetches = new Counter({
    name: 'gateway_oidc_fetches_total',
    help: "Fetches of an OpenID Connect provider's discovery document or key set (JWKS), by result.",
    labelNames: ['resource', 'result'] as const,
    registers: [this.registry],
  });

  /** The label children of each (method, result) seen: prom-client hashes labels per call. */
  private readonly decisionChildren = new Map<string, { inc(): void }>();
  private readonly durationChildren = new Map<string, { observe(value: number): void }>();

  /** Counts one /auth answer and how long it took (on every miss: children kept, not looked up). */
  decided(method: string, result: string, seconds: number): void {
    const key = `${method} ${result}`;
    let decisions = this.decisionChildren.get(key);
    if (!decisions) {
      decisions = this.authDecisions.labels({ method, result });
      this.decisionChildren.set(key, decisions);
    }
    decisions.inc();
    let duration = this.durationChildren.get(method);
    if (!duration) {
      duration = this.authDuration.labels({ method });
      this.durationChildren.set(method, duration);
    }
    duration.observe(seconds);
  }

  /** Counts one provider fetch. */
  fetched(resource: OidcResource, ok: boolean): void {
    this.oidcFetches.inc({ resource, result: ok ? 'ok' : 'error' });
  }

  /** The Prometheus text exposition of every metric. */
  text(): Promise<string> {
    return this.registry.metrics();
  }
}

/** Gauges that read their value when scraped, from `read()`, by label set. */
export function scrapedGauge<L extends string>(
  registry: Registry,
  name: string,
  help: string,
  labelNames: readonly L[],
  read: () => Array<{ labels: Record<L, string>; value: number }>,
): Gauge<L> {
  return new Gauge({
    name,
    help,
    labelNames,
    registers: [registry],
    collect() {
      this.reset();
      for (const { labels, value } of read()) this.set(labels as never, value);
    },
  });
}
