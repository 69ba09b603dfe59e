/**
 * nginx's control socket, the sidecar's way in: its locations, the sidecar's probe answer, and
 * the Lua side's counters it serves.
 */

/**
 * nginx's control endpoint, served on a unix socket only (never the public port). The sidecar
 * POSTs to it: `invalidate` with a body of comma-separated client row ids, `invalidate-all`
 * with an empty body, `created` with the row ids of new clients. All answer 204.
 */
export const CONTROL = {
  invalidate: '/invalidate',
  invalidateAll: '/invalidate-all',
  /**
   * New clients: nginx forgets that their ids were unknown, and nothing else (what it learnt
   * about the new client since is true).
   */
  created: '/created',
  /** nginx proxies this to the sidecar's `/auth`: how the Lua code asks on a miss. */
  auth: '/auth',
  /** GET: the Lua side's counters as one JSON object of numbers; the sidecar's /metrics merges them. */
  metrics: '/metrics',
  /**
   * POST: the refusals nginx decided itself since the last call, as JSON `{"<reason>|<row>": n}`
   * (row empty: no such client); the sidecar adds them to its failure counts.
   */
  failures: '/failures',
  /**
   * POST: the requests nginx counted per client in finished generations, handed over once, as
   * text: sections `<u|x> <unix start s>` (allowed, refused by a rate limit), each followed by
   * lines `<row> <n>`; the sidecar adds them to `api_client_usage`
   * (docs/decisions/20261128-usage-batches.md).
   */
  usage: '/usage',
  /**
   * POST: the rate limit windows' counts, with rate_limits.store redis: a body of lines
   * `<window key> <delta> <ttl s>` (the other pairs' counts the sidecar adds), the answer lines
   * `<window key> <count>` for every window held after them (lua/gateway/fleet.lua).
   */
  limits: '/limits',
  /**
   * GET: proxied to the sidecar's `SIDECAR_PROBE.path` through the same upstream as `auth`;
   * the sidecar's readiness asks it to know that nginx reaches this very sidecar.
   */
  sidecarProbe: '/sidecar-probe',
} as const;

/**
 * The sidecar's answer to nginx's probe: its instance id (random per process) in the body
 * `{"instance":"<id>"}`. Only nginx's control socket proxies to it, never the public port.
 */
export const SIDECAR_PROBE = { path: '/probe' } as const;

/**
 * The Lua side's counters: key in the metrics dict (and the control socket's JSON) → what it
 * counts. `refused_<status>` keys count nginx's own refusals per HTTP status.
 */
export const LUA_COUNTERS = {
  cache_hit: 'a decision answered from the cache',
  cache_miss: 'a cacheable request the cache could not answer (the sidecar was asked)',
  cache_eviction: 'a decision stored by evicting unexpired ones (the cache is too small)',
  cache_store_failed: 'a decision that could not be stored at all',
  key_hit: 'an API key accepted from a key record (right secret, nginx alone)',
  module_hit:
    'a request the nginx module passed without entering Lua (nginx-module/, docs/decisions/20261125-hit-in-c.md); also counted as a key or cache hit',
  module_off:
    '1 while the nginx module is switched off: lua-nginx-module is not the version it was built and tested against (the error log says which); the Lua code decides every request',
  key_refused: 'an API key refused from a key record (wrong secret, unknown id or expired)',
  module_copied:
    "key records the nginx module copied into a worker's own memory ahead of any request for them (each worker sweeps the key table after a load; docs/decisions/20261129-worker-copies-kept.md)",
  module_nobody:
    "an API key whose id the nginx module found to be nobody's in the key table, refused by Lua without reading the request (docs/decisions/20261129-guessed-ids-in-c.md); also counted as key_refused",
  budget_refused: 'a request answered 429 because a failure budget was spent',
  rate_limited: "a request answered 429 because its client's rate limit was reached",
  permission_refused:
    "a request answered 403 because its client's permissions do not allow it (docs/decisions/20261128-permissions.md)",
  ambiguous_path_refused:
    "a restricted client's request answered 400 because its path could reach the application as another path",
} as const;
