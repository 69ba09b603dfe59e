/**
 * The contract between nginx (its config and its Lua code) and the sidecar, defined once
 * (docs/decisions/20261122-nginx-sidecar-contract.md, 20261123-lua-decision-cache.md). The
 * generator turns these rows into nginx directives, `lua/gateway/contract.lua` is generated
 * from them (a test fails on drift), and the sidecar reads its header names from here.
 */

// Defined first: PERMISSIONS_TEXT numbers them. ALLOWED_METHODS (below) is this list.
const ALLOWED_METHODS_LIST: readonly string[] = [
  'GET',
  'HEAD',
  'POST',
  'PUT',
  'PATCH',
  'DELETE',
  'OPTIONS',
];

/**
 * The request id of every request: nginx's own (`$request_id`, 32 hex digits), or the caller's
 * `X-Request-Id` when the caller is a proxy named in `request_id.trusted_proxies` and the id
 * has REQUEST_ID_SHAPE (docs/decisions/20261125-trusted-request-id.md). default.conf's `map`
 * chooses it into `variable`, which is sent to the sidecar and the app under this header,
 * replacing any the caller sent, returned on every answer and written in the access log
 * (docs/decisions/20261123-request-ids-metrics-health.md).
 */
export const REQUEST_ID = {
  header: 'X-Request-Id',
  variable: '$gateway_request_id',
  generated: '$request_id',
} as const;

/**
 * The ids kept from a trusted proxy, and the ids the sidecar and the app log: nginx's 32 hex
 * digits fit, and so do a balancer's UUIDs. Nothing that could break a log line or a header.
 */
export const REQUEST_ID_CHARACTERS = '[A-Za-z0-9._-]{1,64}';
export const REQUEST_ID_SHAPE = new RegExp(`^${REQUEST_ID_CHARACTERS}$`);

/** The methods' switches in default.conf (spec 5.3): `true` or `false`. */
export const TOGGLE_VARIABLES = {
  apiKeys: '$api_keys_enabled',
  oidc: '$open_id_connect_enabled',
} as const;

/** Forwarded by nginx to the sidecar on `/auth` and on `/v1/management/`: header ← variable. */
export const FORWARDED_TO_SIDECAR: ReadonlyArray<{ header: string; variable: string }> = [
  { header: 'X-Gateway-Api-Keys-Enabled', variable: TOGGLE_VARIABLES.apiKeys },
  { header: 'X-Gateway-Oidc-Enabled', variable: TOGGLE_VARIABLES.oidc },
  { header: 'X-Gateway-Oidc-Discovery', variable: '$oidc_discovery' },
  { header: 'X-Gateway-Oidc-Ssl-Verify', variable: '$oidc_ssl_verify' },
  { header: 'X-Gateway-Oidc-Accept-Unsupported-Alg', variable: '$oidc_accept_unsupported_alg' },
  { header: 'X-Gateway-Oidc-Accept-None-Alg', variable: '$oidc_accept_none_alg' },
  { header: 'X-Gateway-Oidc-Redirect-Uri', variable: '$oidc_redirect_uri' },
  { header: 'X-Gateway-Oidc-Client-Id-Claim', variable: '$oidc_client_id_claim' },
  { header: 'X-Gateway-Oidc-Client-Name-Claim', variable: '$oidc_client_name_claim' },
  { header: 'X-Gateway-Oidc-Audience', variable: '$oidc_audience' },
  { header: 'X-Original-Method', variable: '$request_method' },
  { header: 'X-Original-URI', variable: '$request_uri' },
  REQUEST_ID,
];

/**
 * What a decision depends on besides the credential: the methods and OIDC options in force.
 * Part of the decision cache's key, so an edited and reloaded default.conf never reuses an
 * answer given under other settings.
 */
// Forwarded, but not inputs of a cached decision (the request's own, and what bearer checks ignore).
const NOT_DECISION_INPUTS: readonly string[] = [
  '$request_method',
  '$request_uri',
  '$oidc_redirect_uri',
  REQUEST_ID.variable,
];
export const DECISION_VARIABLES: readonly string[] = FORWARDED_TO_SIDECAR.map(
  (row) => row.variable,
).filter((v) => !NOT_DECISION_INPUTS.includes(v));

/**
 * nginx's proof to the sidecar (docs/decisions/20261202-sidecar-trusts-only-nginx.md): a
 * per-install secret in `file` (relative to the configuration directory, beside default.conf),
 * made once by the generator and never rewritten. nginx sends it under `header` on every
 * question and every proxied management request; the sidecar refuses anything without it
 * (`code`, 403) before reading a single setting header. Never a decision input, never sent to
 * the application.
 */
export const SIDECAR_PROOF = {
  header: 'X-Gateway-Proof',
  /** Set only in the management location (by Lua), for its proxy_set_header. */
  variable: '$gateway_proof',
  file: 'nginx/conf.d/sidecar-proof.key',
  code: 'GATEWAY_PROOF_REQUIRED',
} as const;

/** Sent by nginx on management paths: the sidecar requires an admin. */
export const REQUIRE_ADMIN_HEADER = 'X-Gateway-Require-Admin';

/**
 * A question's number on its auth-frame connection (lua/gateway/sidecar_mux.lua): the sidecar
 * sends it back with the answer, and answers a numbered question as soon as it is decided,
 * not behind a slower one asked before it.
 */
export const FRAME_QUESTION_HEADER = 'X-Gateway-Question';

/**
 * The auth frame's marker (sidecar/frames/auth-frame.ts, lua/gateway/auth_frame.lua): a
 * question starts with it and a line feed, an answer's first line with it and a space.
 */
export const FRAME_MARKER = 'GWA1';

/**
 * Identity the sidecar answers on a 2xx: the Lua code copies it into `variable`, which nginx
 * sets on the upstream request under the same header name, replacing any the caller sent.
 * Values are percent-encoded UTF-8 (encodeURIComponent) where they are free text.
 */
export const IDENTITY_FROM_SIDECAR: ReadonlyArray<{
  role: 'client_id' | 'client_name' | 'is_admin' | 'method';
  header: string;
  variable: string;
}> = [
  { role: 'client_id', header: 'X-Client-Id', variable: '$client_id' },
  { role: 'client_name', header: 'X-Client-Name', variable: '$client_name' },
  { role: 'is_admin', header: 'X-Client-Is-Admin', variable: '$client_is_admin' },
  { role: 'method', header: 'X-Auth-Method', variable: '$client_auth_method' },
];

/** Sidecar → nginx only, on a 2xx: never forwarded to the app. */
export const DECISION_FROM_SIDECAR = {
  /** The API client's row id: the unit of invalidation. */
  clientRow: 'X-Gateway-Client-Row',
  /**
   * Unix time (seconds) after which the decision no longer holds: the earliest of a token's
   * `exp`, the client's `expires_at` and a rotated-out secret's grace end.
   */
  validUntil: 'X-Gateway-Valid-Until',
  /**
   * On an API-key answer, 2xx or 401: `known` or `unknown`, the key id being the client row.
   * With the headers below nginx keeps a key record and decides later requests for that id
   * itself (docs/decisions/20261125-miss-path.md). Never a secret: hashes as stored.
   */
  keyRecord: 'X-Gateway-Key-Record',
  /** Hex SHA-256 of the client's secret; absent: the client has no key. */
  keyHash: 'X-Gateway-Key-Hash',
  /** Hex SHA-256 of a rotated-out secret, and the Unix time (s) its grace ends. */
  previousKeyHash: 'X-Gateway-Previous-Key-Hash',
  previousKeyUntil: 'X-Gateway-Previous-Key-Until',
  /** Unix time (s) from which the client is expired; absent: never. */
  expiresAt: 'X-Gateway-Expires-At',
  /**
   * On a 2xx and on a known key record: the client's rate limit as `<requests> <per_seconds>`;
   * absent: none. Kept with the decision or record, so a change reaches nginx by the same push
   * as a revocation (docs/decisions/20261125-rate-limits-and-usage.md).
   */
  rateLimit: 'X-Gateway-Rate-Limit',
  /**
   * On a 2xx and on a known key record: the client's permissions in PERMISSIONS_TEXT; absent:
   * none (it may call everything). Kept with the decision or record like the rate limit
   * (docs/decisions/20261128-permissions.md).
   */
  permissions: 'X-Gateway-Permissions',
} as const;

/**
 * A client's permissions as nginx holds them: one line of ASCII, the same in the /auth
 * answer's header, the decision cache, the key records and the key table's record. `<n>`, the
 * number of rules, then per rule a space, its methods as two lowercase hex digits (the sum of
 * `methodBits`, HEAD's bit set wherever GET's is), and its pattern with every byte beyond ASCII
 * written `%XX` (a pattern never holds `%` or a space itself). `0`: no rule, nothing allowed.
 * Written by common/permissions.ts's permissionsText, read by lua/gateway/permissions.lua.
 */
export const PERMISSIONS_TEXT = {
  methodBits: Object.fromEntries(ALLOWED_METHODS_LIST.map((m, i) => [m, 1 << i])) as Readonly<
    Record<string, number>
  >,
} as const;

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

/** Refusal details the sidecar answers on 401/403, relayed to the caller. */
export const REFUSAL_FROM_SIDECAR = {
  challenge: 'WWW-Authenticate',
  jwtError: 'X-jwt-error',
} as const;

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
 * PostgreSQL channel on which a change of an API client is announced. Payload: the row id for
 * an update or a delete; `CREATED_NOTICE_PREFIX` and the row id for a new client.
 */
export const CLIENT_CHANGES_CHANNEL = 'api_clients_changed';

/** Before the row id in a new client's notice (migration 0010): `created:42`. */
export const CREATED_NOTICE_PREFIX = 'created:';
/**
 * A sidecar's heartbeat on the same channel: `beat:<sender>:<n>:<epoch>:<position>`, the feed's
 * head as the NOTIFY's own statement saw it. Received on the LISTEN connection, it proves
 * notices are being delivered (docs/decisions/20261201-no-change-skipped.md); other sidecars'
 * beats are ignored, older sidecars ignore them all.
 */
export const BEAT_NOTICE_PREFIX = 'beat:';

/** nginx's variable for a response header of the (sub)request's upstream. */
export function upstreamHeaderVariable(header: string): string {
  return `$upstream_http_${header.toLowerCase().replaceAll('-', '_')}`;
}

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

/** More header lines than this are refused (431) before any credential is looked at. */
export const MAX_REQUEST_HEADERS = 100;

/**
 * The gateway's nginx module (nginx-module/): decides a seen API key's hit in C, without
 * entering Lua's access phase, in locations that say `<directive> on;` (default.conf's
 * `location /`). Anything it does not pass goes to the Lua access code unchanged
 * (docs/decisions/20261125-hit-in-c.md).
 */
export const NGINX_MODULE = {
  directive: 'gateway_hit',
  file: 'ngx_http_gateway_hit_module.so',
  /**
   * The module's C function that takes the decision cache's hashing key from the Lua code
   * (lua/gateway/keying.lua, in the master before the workers fork), so both hash alike.
   */
  hmacKeySetter: 'ngx_http_gateway_hit_set_hmac_key',
  /**
   * The module's C function that hands its per-client request counts (this worker's, since the
   * last call) to lua/gateway/usage.lua's flush, as lines `<row> <n>`
   * (docs/decisions/20261128-usage-batches.md).
   */
  usageTaker: 'ngx_http_gateway_hit_usage_take',
  /**
   * The module's C function the Lua access code asks first, with the request: 1 when the module
   * found the request's API key id to be nobody's in the trusted, live key table (the state
   * lua/gateway/key_table.lua's lookup reads), so Lua refuses it without reading the credential
   * or the header block: no Lua string is made of a guessed key's bytes
   * (docs/decisions/20261129-guessed-ids-in-c.md).
   */
  nobodyTeller: 'ngx_http_gateway_hit_nobody',
  /**
   * The lua-nginx-module the module is built and tested against, as `ngx.config.ngx_lua_version`
   * counts it (0.10.23, Debian 12's): the module calls that module's private functions, declared
   * by hand. The Lua code hands its version over with the hashing key (the way resty.core pins
   * it), and for any other the module switches itself off at start: the Lua code decides every
   * request, the error log says why and the counter `module_off` is 1.
   */
  luaModuleVersion: 10023,
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

/** The largest `auth_cache.max_age_ms` the settings accept. */
export const MAX_AGE_LIMIT_MS = 3_600_000;

/** Methods the gateway passes on; any other is answered 405 before authentication. */
export const ALLOWED_METHODS: readonly string[] = ALLOWED_METHODS_LIST;

/**
 * The key table's replica in nginx (docs/decisions/20261127-key-table-replica.md): every API
 * client's key record in a shared dict of its own, loaded by the sidecar when a pair starts and
 * kept current by the change feed. A record is binary (`KEY_RECORD`); the dict's other keys
 * (`state`, never an id: ids are digits) say how far nginx may trust it.
 */
export const KEY_TABLE = {
  /** The shared dict; absent from default.conf: no replica (nginx asks as before). */
  dict: 'gateway_key_table',
  /** The control socket's location for the replica (GET: its state; POST: load, apply, drop). */
  controlPath: '/key-table',
  /** `set` in the control location: how long nginx decides from its replica without news. */
  trustVariable: '$key_table_trust_s',
  state: {
    /** Unix time (s) until which held records are trusted; absent or past: not complete. */
    trustedUntil: '#trusted_until',
    /** Unix time (s) until which an id the replica does not hold is refused as nobody's. */
    liveUntil: '#live_until',
    /** `<epoch>:<position>` of the change feed the replica reflects. */
    position: '#position',
    /** `loading` or `complete`; absent: empty. */
    phase: '#phase',
    /** Present (true) once a record could not be stored: ids not held are asked about. */
    full: '#full',
    /** Records held (a number kept by the Lua code). */
    records: '#records',
    /** The largest client id held (ids only grow): an id just above it may be brand new. */
    maxId: '#max_id',
    /** Seconds the last full load took, and when it completed (Unix time). */
    loadSeconds: '#load_s',
    loadedAt: '#loaded_at',
    /**
     * A number that changes whenever any record does (set at each load to the load's Unix
     * second × 10⁶, so never again to a value an earlier load had, then one up per apply that
     * stores or deletes records): the nginx module keeps copies of the records in each worker,
     * and when it changes drops the ones `changes` names, or all of them
     * (docs/decisions/20261128-worker-record-copies.md, 20261129-worker-copies-kept.md).
     */
    version: '#version',
  },
  /**
   * Which ids each version changed: the key `<prefix><version mod slots>` holds
   * `<version> <id> <id>…` (at most `ids` of them) or `<version> *` (more, or unknown), written
   * after the version moved on. A worker behind by at most `slots` versions drops the copies of
   * the ids named; a slot holding another version, or a `*`, drops them all.
   */
  changes: { prefix: '#changed:', slots: 64, ids: 32 },
  /** How long after the sidecar's last word an unknown id is still refused by nginx alone. */
  liveSeconds: 5,
  /**
   * Ids this far below the largest one held are asked about, not refused: a client created on
   * another pair a moment ago, committed out of id order beside other creators, passes at once.
   */
  newIdBand: 1_000,
  /**
   * Ids up to this far above the largest one held are asked about, not refused: clients
   * committed a moment ago whose notice has not reached this pair yet, a bulk import of up to
   * this many included (a caller who read the ids from the commit may use them before the
   * notice lands). A guessed id, almost always far above, is still refused by nginx alone
   * (docs/decisions/20261202-ids-ahead-of-their-notice.md).
   */
  newIdReach: 10_000_000,
} as const;

/**
 * The fields of a key record learnt from the sidecar's answer (the keys dict, with the key table
 * off or for ids it does not hold), tab-separated in this order: lua/gateway/keys.lua writes
 * and reads them, the nginx module reads them (both generated from this list). Hashes in hex,
 * times as Unix seconds, absent values empty; `limit` absent in a record stored before limits,
 * `permissions` for a client without rules (the module checks them as Lua does).
 */
export const LEARNT_KEY_FIELDS = [
  'created',
  'kind',
  'expires_at',
  'previous_until',
  'is_admin',
  'client_id',
  'client_name',
  'hash',
  'previous_hash',
  'limit',
  'permissions',
] as const;

/**
 * The fields of a cached decision (the decisions dict), tab-separated in this order:
 * lua/gateway/entry.lua writes and reads them, the nginx module reads them (both generated from
 * this list). `limit` absent in an entry stored before limits, `permissions` for a client
 * without rules (the module checks them as Lua does).
 */
export const DECISION_FIELDS = [
  'created',
  'row',
  'is_admin',
  'method',
  'client_id',
  'client_name',
  'limit',
  'permissions',
] as const;

/**
 * A key record in the replica: bytes, not text, so a client costs one 128-byte slab of shared
 * memory (docs/decisions/20261127-key-table-replica.md). Read by lua/gateway/key_table.lua and
 * the nginx module; written by sidecar/replica/key-record-bytes.ts.
 *   byte 1: the format (`version`); byte 2: `flags`
 *   [32 bytes: SHA-256 of the current secret]          when flags has `key`
 *   [32 bytes: SHA-256 of a rotated-out secret,
 *    1 byte n, n bytes: its grace end (Unix s, text)]   when flags has `previous`
 *   [1 byte n, n bytes: expiry (Unix s, text)]          when flags has `expires`
 *   [1 byte n, n bytes: `<requests> <per_seconds>`]     when flags has `limit`
 *   [1 byte n, n bytes: L in decimal, L bytes:
 *    the client's permissions in PERMISSIONS_TEXT]     when flags has `rules`
 *   the rest: the client's name, percent-encoded (as the identity header carries it)
 * The nginx module passes a client with `rules` only on a request they allow
 * (ngx_http_gateway_hit_permits, the same matcher as lua/gateway/permissions.lua); any other
 * request is Lua's, which refuses it.
 * A deleted client leaves a record of its own (flags `gone`, nothing after): its id is refused
 * by nginx alone for as long as the replica is trusted, a database outage included.
 */
export const KEY_RECORD = {
  version: 1,
  flags: { admin: 1, key: 2, previous: 4, expires: 8, limit: 16, gone: 32, rules: 64 },
  hashBytes: 32,
} as const;
