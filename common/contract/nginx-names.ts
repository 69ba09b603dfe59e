/**
 * Names inside nginx (variables, dicts, locations) that the rendered config and the Lua code
 * both use, the console's among them.
 */

/** Names inside nginx that the rendered config and the Lua code both use. */
export const NGINX_NAMES = {
  /** Prefix of the internal locations that answer nginx's own errors as JSON. */
  errorLocationPrefix: '/_gateway/errors/',
  /**
   * Paths of the public server that never reach the app: the gateway's own prefix (holding
   * the error locations), and the names its auth locations had before they moved to the
   * control socket. Asked from outside: authenticated, then the JSON 404.
   */
  reservedPaths: [
    { match: '^~', path: '/_gateway/' },
    { match: '=', path: '/_auth' },
    { match: '=', path: '/_auth_admin' },
  ],
  /**
   * `set` in default.conf after the settings: their values joined by nginx itself, so the hot
   * path reads one variable instead of one per setting.
   */
  decisionInputsVariable: '$gateway_decision_inputs',
  /** `set` in default.conf: the control socket, as `unix:/path`, for the Lua code. */
  controlSocketVariable: '$gateway_control_socket',
  /** Shared dicts: decisions (evicts when full) and revocation markers (never evicts live ones). */
  decisionsDict: 'gateway_decisions',
  revocationsDict: 'gateway_revocations',
  /** Counters of the Lua code, flushed from each worker about once a second. */
  metricsDict: 'gateway_metrics',
  /** `set` in default.conf, read by Lua on a miss: how long a decision may be reused. */
  maxAgeVariable: '$auth_cache_max_age_ms',
  /** Key records (API key id → hashes and identity), evicted least recently used when full. */
  keysDict: 'gateway_keys',
  /** Failure budgets: counters per claimed key id and per source address, per window. */
  budgetsDict: 'gateway_budgets',
  /**
   * `set` in default.conf: where the Lua code asks the sidecar in one hop (`unix:/path` or
   * `ip:port`); empty: through the control socket's /auth (a sidecar known by a DNS name).
   */
  sidecarVariable: '$gateway_sidecar',
  /** `set` in default.conf: how long the Lua code waits for the sidecar's answer, in ms. */
  authTimeoutVariable: '$gateway_auth_timeout_ms',
  /**
   * `set` in default.conf: `<per key id> <per address> <window s>`, failures allowed per window
   * before nginx answers 429 itself; 0 turns a budget off.
   */
  failureBudgetVariable: '$gateway_failure_budget',
  /**
   * Rate-limit windows and per-client request counts (docs/decisions/20261125-rate-limits-and-usage.md).
   * A default.conf from before it has none: the Lua code then uses the budgets dict.
   */
  limitsDict: 'gateway_limits',
} as const;

/**
 * The browser console's names in default.conf and nginx.conf, read by the generator and the Lua
 * code (docs/decisions/20261123-console.md).
 */
export const CONSOLE_NGINX = {
  /** `set` in default.conf: true serves the console's files without a credential. */
  enabledVariable: '$console_enabled',
  oidcClientIdVariable: '$console_oidc_client_id',
  oidcScopeVariable: '$console_oidc_scope',
  /** Filled by Lua per request with the OIDC provider's origin, for the CSP's connect-src. */
  connectOriginVariable: '$console_connect_origin',
  /** The named location that takes /console/ to the app while the console is off. */
  offLocation: '@console_off',
  /** Set in nginx.conf (a `map`): the folder that holds `console/`, the package root. */
  staticRootVariable: '$gateway_static_root',
  /** The console's own JSON settings, answered by Lua from the variables above. */
  configPath: '/console/config.json',
} as const;
