/**
 * Where rate limit counts are kept (the sidecar's environment; docs/reference/settings.md):
 * `rate_limits.store` is RATE_LIMITS_STORE, `rate_limits.redis.url` RATE_LIMITS_REDIS_URL, the
 * sync interval RATE_LIMITS_SYNC_MS, `rate_limits.redis.on_failure` RATE_LIMITS_ON_FAILURE
 * (docs/decisions/20261202-global-rate-limits.md).
 */
export interface RateLimitStoreSettings {
  store: 'local' | 'redis';
  redisUrl: string;
  syncMs: number;
  /**
   * Redis away: each pair enforces the whole limit alone (`local`), or no request of a limited
   * client passes, 503 RATE_LIMIT_STORE_UNREACHABLE (`closed`), also until the first sync.
   */
  onFailure: 'local' | 'closed';
}

export function readRateLimitStoreSettings(env: NodeJS.ProcessEnv): RateLimitStoreSettings {
  const problems: string[] = [];
  const store = env.RATE_LIMITS_STORE || 'local';
  if (store !== 'local' && store !== 'redis') {
    problems.push(`RATE_LIMITS_STORE must be local or redis, got ${JSON.stringify(store)}`);
  }
  const redisUrl = env.RATE_LIMITS_REDIS_URL ?? '';
  if (store === 'redis' && !/^rediss?:\/\/\S+$/.test(redisUrl)) {
    problems.push(
      `RATE_LIMITS_REDIS_URL must be a redis:// or rediss:// URL with RATE_LIMITS_STORE redis, got ${JSON.stringify(redisUrl)}`,
    );
  }
  const syncText = env.RATE_LIMITS_SYNC_MS || '1000';
  const syncMs = /^[0-9]{1,6}$/.test(syncText) ? Number(syncText) : Number.NaN;
  if (!(syncMs >= 100 && syncMs <= 60_000)) {
    problems.push(
      `RATE_LIMITS_SYNC_MS must be a whole number from 100 to 60000, got ${JSON.stringify(syncText)}`,
    );
  }
  const onFailure = env.RATE_LIMITS_ON_FAILURE || 'local';
  if (onFailure !== 'local' && onFailure !== 'closed') {
    problems.push(
      `RATE_LIMITS_ON_FAILURE must be local or closed, got ${JSON.stringify(onFailure)}`,
    );
  }
  if (problems.length > 0) throw new Error(problems.join('; '));
  return {
    store: store as 'local' | 'redis',
    redisUrl,
    syncMs,
    onFailure: onFailure as 'local' | 'closed',
  };
}
