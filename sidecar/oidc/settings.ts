import { readFileSync } from 'node:fs';

/**
 * How the sidecar talks to OpenID Connect providers. nginx says *which* provider per request
 * (discovery URL, ssl_verify...); these settings are the sidecar's own, from its environment,
 * because the provider is reached from the sidecar's host or container.
 * See docs/decisions/20261122-oidc-provider-access.md.
 */
export interface OidcSettings {
  /** Extra PEM certificates trusted for providers (with ssl_verify yes), beside Node's roots. */
  extraCa: string[];
  /** Leeway for `exp`, `nbf` and `iat`, in seconds. */
  clockToleranceSeconds: number;
  /** Time-out of one discovery or key set request, in milliseconds. */
  httpTimeoutMs: number;
  /** Minimum time between two key set fetches caused by an unknown `kid`. */
  jwksCooldownMs: number;
  /** After this age, discovery and keys are refreshed in the background. */
  cacheMaxAgeMs: number;
  /** How long past `cacheMaxAgeMs` cached discovery and keys still verify while refreshing fails. */
  maxStaleMs: number;
}

export const OIDC_DEFAULTS: Omit<OidcSettings, 'extraCa'> = {
  clockToleranceSeconds: 30,
  httpTimeoutMs: 5_000,
  jwksCooldownMs: 30_000,
  cacheMaxAgeMs: 600_000,
  maxStaleMs: 86_400_000,
};

/** Reads `OIDC_*` variables; a bad value stops the start-up rather than weakening checks. */
export function readOidcSettings(env: NodeJS.ProcessEnv): OidcSettings {
  return {
    extraCa: env.OIDC_CA_FILE ? readCaFile(env.OIDC_CA_FILE) : [],
    clockToleranceSeconds: integer(
      env,
      'OIDC_CLOCK_TOLERANCE_SECONDS',
      OIDC_DEFAULTS.clockToleranceSeconds,
      0,
      300,
    ),
    httpTimeoutMs: integer(env, 'OIDC_HTTP_TIMEOUT_MS', OIDC_DEFAULTS.httpTimeoutMs, 100, 60_000),
    jwksCooldownMs:
      integer(env, 'OIDC_JWKS_COOLDOWN_SECONDS', OIDC_DEFAULTS.jwksCooldownMs / 1000, 0, 3_600) *
      1000,
    cacheMaxAgeMs:
      integer(env, 'OIDC_CACHE_MAX_AGE_SECONDS', OIDC_DEFAULTS.cacheMaxAgeMs / 1000, 0, 86_400) *
      1000,
    maxStaleMs:
      integer(env, 'OIDC_MAX_STALE_SECONDS', OIDC_DEFAULTS.maxStaleMs / 1000, 0, 604_800) * 1000,
  };
}

function integer(
  env: NodeJS.ProcessEnv,
  name: string,
  fallback: number,
  min: number,
  max: number,
): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new Error(
      `${name} must be a whole number from ${min} to ${max}, got ${JSON.stringify(raw)}`,
    );
  }
  return Number(raw);
}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

function readCaFile(path: string): string[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new Error(`OIDC_CA_FILE cannot be read (${(err as Error).message})`);
  }
  const certificates = text.match(PEM_CERTIFICATE) ?? [];
  if (certificates.length === 0) {
    throw new Error(`OIDC_CA_FILE ${path} holds no PEM certificate`);
  }
  return certificates;
}
