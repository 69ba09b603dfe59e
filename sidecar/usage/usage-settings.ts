/** The usage table's settings (environment of the sidecar; docs/reference/settings.md). */
export interface UsageSettings {
  /** How long usage rows are kept, in days. */
  retentionDays: number;
  /** How often nginx's counts are collected and written, in ms. */
  flushMs: number;
  /** How often rows past the retention are pruned, in ms. */
  pruneIntervalMs: number;
}

export const USAGE_DEFAULTS: UsageSettings = {
  retentionDays: 30,
  flushMs: 10_000,
  pruneIntervalMs: 3_600_000,
};

function whole(
  env: NodeJS.ProcessEnv,
  name: string,
  fallback: number,
  min: number,
  max: number,
  problems: string[],
): number {
  const text = env[name];
  if (text === undefined || text === '') return fallback;
  const n = /^[0-9]{1,10}$/.test(text) ? Number(text) : Number.NaN;
  if (!(n >= min && n <= max)) {
    problems.push(
      `${name} must be a whole number from ${min} to ${max}, got ${JSON.stringify(text)}`,
    );
    return fallback;
  }
  return n;
}

/**
 * USAGE_RETENTION_DAYS (1–3650, default 30), USAGE_FLUSH_MS (100–600000, default 10000),
 * USAGE_PRUNE_INTERVAL_MS (1000–86400000, default one hour); every problem at once.
 */
export function readUsageSettings(env: NodeJS.ProcessEnv): UsageSettings {
  const problems: string[] = [];
  const d = USAGE_DEFAULTS;
  const settings = {
    retentionDays: whole(env, 'USAGE_RETENTION_DAYS', d.retentionDays, 1, 3650, problems),
    flushMs: whole(env, 'USAGE_FLUSH_MS', d.flushMs, 100, 600_000, problems),
    pruneIntervalMs: whole(
      env,
      'USAGE_PRUNE_INTERVAL_MS',
      d.pruneIntervalMs,
      1000,
      86_400_000,
      problems,
    ),
  };
  if (problems.length > 0) throw new Error(problems.join('; '));
  return settings;
}
