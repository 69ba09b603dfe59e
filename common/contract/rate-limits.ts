/**
 * Rate limits and usage counts: the headers a limited client sees, and the keys of nginx's
 * limits dict that the Lua code, the nginx module and the sidecar's usage drain share.
 */

/**
 * The headers of the IETF httpapi draft (draft-ietf-httpapi-ratelimit-headers) on every answer
 * to a rate-limited client, and the name of the one policy they describe.
 */
export const RATE_LIMIT_HEADERS = {
  policy: 'RateLimit-Policy',
  state: 'RateLimit',
  policyName: 'client',
} as const;

/**
 * A rate limit's windows in nginx's limits dict: `<prefix><row> <per> <index>` counts the
 * allowed requests of client `row` in window `index` (the Unix time divided by `per`, rounded
 * down). The Lua code and the nginx module count in the same keys; a limit longer than
 * `maxPerSeconds` is not one (lua/gateway/ratelimit.lua).
 */
export const RATE_LIMIT_WINDOWS = {
  prefix: 'l',
  maxPerSeconds: 86_400,
} as const;

/**
 * Requests counted per client for the sidecar's usage table, in the limits dict, a generation
 * being `generationSeconds` long, kept `keepSeconds` when nobody collects them
 * (lua/gateway/usage.lua). Allowed requests: one batch per worker and second,
 * `<allowedPrefix><generation> <pid>:<seq>` holding lines `<row> <n>` (the Lua code's counts and
 * the nginx module's); refused ones by a rate limit, and the module's allowed ones when it cannot
 * count them itself: a number per client, `<prefix><generation> <row>`
 * (docs/decisions/20261128-usage-batches.md).
 */
export const USAGE_COUNTS = {
  allowedPrefix: 'u',
  limitedPrefix: 'x',
  generationSeconds: 5,
  keepSeconds: 3600,
} as const;

/**
 * rate_limits.redis.on_failure `closed` (docs/decisions/20261202-global-rate-limits.md): while
 * the sidecar cannot sync with Redis, and from its start until its first sync, it holds
 * `closedKey` in the limits dict (through CONTROL.limits `?closed=<s>`, without expiry: a
 * sidecar that dies meanwhile leaves it set), the number being the Retry-After in seconds, and
 * deletes it (`?closed=0`) with the counts of its first sync that works, and at start with any
 * other setting. While it is there, nginx (the Lua code and the module alike) passes no request
 * of a rate-limited client: 503 RATE_LIMIT_STORE_UNREACHABLE. A client without a limit is
 * never affected. `maxRetryAfterSeconds` bounds what nginx takes.
 */
export const RATE_LIMIT_STORE = {
  closedKey: '#store_closed',
  maxRetryAfterSeconds: 3600,
} as const;
