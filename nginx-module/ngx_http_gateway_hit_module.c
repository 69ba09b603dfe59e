/*
 * The gateway's nginx module: a seen API key's or token's hit decided in C, without entering
 * Lua's access phase (docs/decisions/20261125-hit-in-c.md). The Lua access code's coroutine,
 * checks and variable writes cost nginx 15-18 µs per hit; this path costs about 5.
 *
 * How: after the configuration is read, lua-nginx-module's access handler is replaced in the
 * phase engine by gateway_hit_access_handler, which calls it unchanged unless the request's
 * location says `gateway_hit on;` (only default.conf's `location /` does: a location added by
 * hand, management and the console always go to Lua) and the request is plainly a hit:
 *
 *   HTTP/1.0 or 1.1 with a header block whose every line is a token, a colon and a value
 *   without control bytes (at most GW_MAX_HEADERS lines), or HTTP/2 with at most that many
 *   headers and no control bytes in their values; an allowed method, API keys on, the cache
 *   on, `Authorization: apk <id>.<secret>` in the issued shape, and either its record in the key
 *   table's replica while that is trusted (docs/decisions/20261127-key-table-replica.md; then
 *   nothing else is read, an id it does not hold is Lua's), or, the cache on, a live "known" key
 *   record for <id> in the keys dict (no revocation marker of that client or of everything since it was
 *   learnt, not past half its life), whose current hash (or rotated-out hash, within its
 *   grace) is the SHA-256 of the secret, and a client not past its expiry;
 *
 * or, for any other credential (a bearer token above all), a live cached "yes" in the decisions
 * dict under the same keyed hash the Lua code computes (HMAC-SHA-256 of the credential and
 * $gateway_decision_inputs, with the key the Lua code hands over in the master), for a client
 * not revoked since;
 *
 * and, for a client with a rate limit, a request that fits in it: counted in the same window
 * as the Lua code counts, with the same RateLimit headers. One that does not fit is not
 * counted and goes to Lua, which answers 429 with Retry-After.
 *
 * Then it sets the identity variables, counts the request for the client's usage and the hit
 * in the metrics dict, as the Lua code does, and says yes. Anything else, a doubt included,
 * goes to the Lua access code, which decides exactly as before: this code never refuses, so
 * nothing it gets wrong can let a caller in that Lua would refuse unless its checks are
 * weaker than Lua's, and each is the same or stricter (test/e2e/hit-module.test.ts).
 *
 * It reads the shared dicts through lua-nginx-module's exported ffi functions (the ones
 * resty.core declares), and is built against the nginx on the machine by
 * scripts/build-nginx-module.sh. Names come from gateway_contract.h, generated from
 * common/contract.ts.
 */
#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
/* The low-level SHA256_* calls: OpenSSL 3's one-shot SHA256() and EVP look the algorithm up in
 * their provider tables on every call, 4.5 µs per request here (perf), more than the hash. */
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/sha.h>
#include <openssl/crypto.h>
#include <math.h>

#include "gateway_contract.h"

/* lua-nginx-module's exported functions (resty/core/shdict.lua declares the same). */
ngx_shm_zone_t *ngx_http_lua_find_zone(u_char *name_data, size_t name_len);
int ngx_http_lua_ffi_shdict_get(void *zone, const unsigned char *key, size_t key_len,
    int *value_type, unsigned char **str_value_buf, size_t *str_value_len, double *num_value,
    int *user_flags, int get_stale, int *is_stale, char **errmsg);
int ngx_http_lua_ffi_shdict_incr(void *zone, const unsigned char *key, size_t key_len,
    double *value, char **err, int has_init, double init, long init_ttl, int *forcible);
ngx_int_t ngx_http_lua_access_handler(ngx_http_request_t *r);

/* lua-nginx-module's value types in a shared dict (Lua's): nil is what a missing key reads. */
#define SHDICT_TNIL 0
#define SHDICT_TNUMBER 3
#define SHDICT_TSTRING 4
/* A key record longer than this (a very long client name) is left to Lua. */
#define RECORD_BUFFER 2048
#define HASH_HEX_LEN 64

typedef struct {
    ngx_flag_t enabled;
} gateway_hit_loc_conf_t;

enum { V_API_KEYS, V_MAX_AGE, V_INPUTS, V_CLIENT_ID, V_CLIENT_NAME, V_IS_ADMIN, V_METHOD,
       V_COUNT };

/* Per configuration, not in statics: a worker respawned for the running configuration after a
 * reload failed must not see the indexes of the configuration that failed. */
typedef struct {
    /* whether any location said `gateway_hit on;`: without one no variable is looked up, so a
     * configuration that does not use the module needs none of them */
    ngx_flag_t used;
    ngx_int_t var_index[V_COUNT];
} gateway_hit_main_conf_t;

static void *gateway_hit_create_main_conf(ngx_conf_t *cf);
static ngx_int_t gateway_hit_postconfiguration(ngx_conf_t *cf);
static ngx_int_t gateway_hit_init_module(ngx_cycle_t *cycle);
static ngx_int_t gateway_hit_init_process(ngx_cycle_t *cycle);
static void *gateway_hit_create_loc_conf(ngx_conf_t *cf);
static char *gateway_hit_merge_loc_conf(ngx_conf_t *cf, void *parent, void *child);
static ngx_int_t gateway_hit_access_handler(ngx_http_request_t *r);

static ngx_command_t gateway_hit_commands[] = {
    { ngx_string(GW_DIRECTIVE),
      NGX_HTTP_LOC_CONF | NGX_CONF_FLAG,
      ngx_conf_set_flag_slot,
      NGX_HTTP_LOC_CONF_OFFSET,
      offsetof(gateway_hit_loc_conf_t, enabled),
      NULL },
    ngx_null_command
};

static ngx_http_module_t gateway_hit_ctx = {
    NULL,                           /* preconfiguration */
    gateway_hit_postconfiguration,  /* postconfiguration */
    gateway_hit_create_main_conf,
    NULL,                           /* init main conf */
    NULL, NULL,                     /* server conf */
    gateway_hit_create_loc_conf,
    gateway_hit_merge_loc_conf
};

ngx_module_t ngx_http_gateway_hit_module = {
    NGX_MODULE_V1,
    &gateway_hit_ctx,
    gateway_hit_commands,
    NGX_HTTP_MODULE,
    NULL,                           /* init master */
    gateway_hit_init_module,
    gateway_hit_init_process,
    NULL, NULL, NULL, NULL,
    NGX_MODULE_V1_PADDING
};

static ngx_str_t var_names[V_COUNT] = {
    ngx_string(GW_API_KEYS_VARIABLE), ngx_string(GW_MAX_AGE_VARIABLE),
    ngx_string(GW_DECISION_INPUTS_VARIABLE),
    ngx_string(GW_CLIENT_ID_VARIABLE), ngx_string(GW_CLIENT_NAME_VARIABLE),
    ngx_string(GW_IS_ADMIN_VARIABLE), ngx_string(GW_METHOD_VARIABLE),
};

/* Found in each worker (lua-nginx-module looks in ngx_cycle, the new cycle only by then). */
static ngx_shm_zone_t *keys_zone, *revocations_zone, *limits_zone, *metrics_zone, *decisions_zone;
/* The key table's replica (lua/gateway/key_table.lua); NULL when default.conf has none. */
static ngx_shm_zone_t *key_table_zone;

/* The decision cache's HMAC key, as SHA-256 states after the inner and the outer padded key
 * (RFC 2104): set by the Lua code in the master (lua/gateway/keying.lua), new at every start,
 * inherited by the workers. Never in shared memory. */
static SHA256_CTX hmac_inner, hmac_outer;
static ngx_flag_t hmac_ready;

/* RFC 9110's token characters. */
static u_char token_char[256];

/* A cached decision's fields, in lua/gateway/entry.lua's order (encode/decode). */
enum { D_CREATED, D_ROW, D_IS_ADMIN, D_METHOD, D_CLIENT_ID, D_CLIENT_NAME, D_LIMIT, D_COUNT };

/* A key record's fields, in lua/gateway/keys.lua's order (encode/decode). */
enum { F_CREATED, F_KIND, F_EXPIRES_AT, F_PREVIOUS_UNTIL, F_IS_ADMIN, F_CLIENT_ID,
       F_CLIENT_NAME, F_HASH, F_PREVIOUS_HASH, F_LIMIT, F_COUNT };

typedef struct {
    u_char *data[F_COUNT];
    size_t len[F_COUNT];
} record_t;


static void *
gateway_hit_create_loc_conf(ngx_conf_t *cf)
{
    gateway_hit_loc_conf_t *conf = ngx_pcalloc(cf->pool, sizeof(gateway_hit_loc_conf_t));

    if (conf == NULL) {
        return NULL;
    }
    conf->enabled = NGX_CONF_UNSET;
    return conf;
}


/* Not inherited: only the location that says it decides hits here. A location nested in it, or
 * added by hand beside it, goes to Lua. */
static char *
gateway_hit_merge_loc_conf(ngx_conf_t *cf, void *parent, void *child)
{
    gateway_hit_loc_conf_t *conf = child;
    gateway_hit_main_conf_t *mcf;

    ngx_conf_init_value(conf->enabled, 0);
    if (conf->enabled) {
        mcf = ngx_http_conf_get_module_main_conf(cf, ngx_http_gateway_hit_module);
        mcf->used = 1;
    }
    return NGX_CONF_OK;
}


static void *
gateway_hit_create_main_conf(ngx_conf_t *cf)
{
    return ngx_pcalloc(cf->pool, sizeof(gateway_hit_main_conf_t));
}


static ngx_int_t
gateway_hit_postconfiguration(ngx_conf_t *cf)
{
    ngx_uint_t i;
    const char *extra = "!#$%&'*+-.^_`|~";
    gateway_hit_main_conf_t *mcf =
        ngx_http_conf_get_module_main_conf(cf, ngx_http_gateway_hit_module);

    for (i = 0; i < 256; i++) {
        token_char[i] = (i >= '0' && i <= '9') || (i >= 'a' && i <= 'z')
                        || (i >= 'A' && i <= 'Z');
    }
    for (; *extra; extra++) {
        token_char[(u_char) *extra] = 1;
    }
    if (!mcf->used) {
        return NGX_OK;
    }
    for (i = 0; i < V_COUNT; i++) {
        mcf->var_index[i] = ngx_http_get_variable_index(cf, &var_names[i]);
        if (mcf->var_index[i] == NGX_ERROR) {
            return NGX_ERROR;
        }
    }
    return NGX_OK;
}


/* After the configuration is read (the phase engine is built by then): Lua's access handler
 * becomes ours, which calls it for everything it does not pass itself. */
static ngx_int_t
gateway_hit_init_module(ngx_cycle_t *cycle)
{
    ngx_uint_t i, wrapped = 0;
    ngx_http_core_main_conf_t *cmcf;
    gateway_hit_main_conf_t *mcf;
    ngx_http_phase_handler_t *ph;

    cmcf = ngx_http_cycle_get_module_main_conf(cycle, ngx_http_core_module);
    mcf = ngx_http_cycle_get_module_main_conf(cycle, ngx_http_gateway_hit_module);
    if (cmcf == NULL || mcf == NULL || !mcf->used) {
        return NGX_OK;
    }
    ph = cmcf->phase_engine.handlers;
    for (i = 0; ph[i].checker; i++) {
        if (ph[i].handler == ngx_http_lua_access_handler) {
            ph[i].handler = gateway_hit_access_handler;
            wrapped++;
        }
    }
    if (wrapped == 0) {
        /* A configuration without Lua's access phase (the bench's auth-off copies): there is
         * nothing to decide, and nothing that could be skipped. */
        ngx_log_error(NGX_LOG_NOTICE, cycle->log, 0,
                      GW_DIRECTIVE ": no Lua access phase, nothing to decide");
    }
    return NGX_OK;
}


static ngx_shm_zone_t *
find_zone(const char *name)
{
    return ngx_http_lua_find_zone((u_char *) name, ngx_strlen(name));
}


static ngx_int_t
gateway_hit_init_process(ngx_cycle_t *cycle)
{
    gateway_hit_main_conf_t *mcf =
        ngx_http_cycle_get_module_main_conf(cycle, ngx_http_gateway_hit_module);

    if (mcf == NULL || !mcf->used) {
        return NGX_OK;
    }
    keys_zone = find_zone(GW_KEYS_DICT);
    revocations_zone = find_zone(GW_REVOCATIONS_DICT);
    limits_zone = find_zone(GW_LIMITS_DICT);
    metrics_zone = find_zone(GW_METRICS_DICT);
    decisions_zone = find_zone(GW_DECISIONS_DICT);
    key_table_zone = find_zone(GW_KEY_TABLE_DICT);
    return NGX_OK;
}


/* Called by the Lua code in the master (init_by_lua) with the decision cache's hashing key. */
void
GW_HMAC_KEY_SETTER(const u_char *key, size_t len)
{
    u_char pad[64];
    size_t i;

    if (len > sizeof(pad)) {
        hmac_ready = 0;
        return;
    }
    for (i = 0; i < sizeof(pad); i++) {
        pad[i] = (u_char) ((i < len ? key[i] : 0) ^ 0x36);
    }
    SHA256_Init(&hmac_inner);
    SHA256_Update(&hmac_inner, pad, sizeof(pad));
    for (i = 0; i < sizeof(pad); i++) {
        pad[i] = (u_char) ((i < len ? key[i] : 0) ^ 0x5c);
    }
    SHA256_Init(&hmac_outer);
    SHA256_Update(&hmac_outer, pad, sizeof(pad));
    ngx_explicit_memzero(pad, sizeof(pad));
    hmac_ready = 1;
}


/*
 * HTTP/1's header block as nginx left it in its buffer, where it wrote a NUL over each name's
 * colon and at each value's end (over its CR, or its first trailing blank): every line a
 * token, then the colon, then a value that is not empty and has no control byte but tab; at
 * most GW_MAX_HEADERS lines. The Lua screen (lua/gateway/request_check.lua) refuses a line
 * without a colon, a name that is not a token and control bytes, and counts lines: this
 * passes less (an empty value, a block in nginx's large header buffers go to Lua).
 */
static ngx_flag_t
clean_header_block(ngx_http_request_t *r)
{
    u_char *p, *end, c;
    ngx_uint_t lines = 0;
    ngx_buf_t *b = r->header_in;

    if (b == NULL || r->request_line.data < b->start || r->request_line.data >= b->pos
        || b->pos > b->last) {
        return 0;
    }
    p = r->request_line.data + r->request_line.len;
    end = b->pos;
    if (p < end && (*p == CR || *p == '\0')) {
        p++;
    }
    if (p >= end || *p != LF) {
        return 0;
    }
    p++;
    for ( ;; ) {
        if (p >= end) {
            return 0;
        }
        if (*p == CR || *p == LF) {
            return 1;  /* the empty line that ends the block */
        }
        if (++lines > GW_MAX_HEADERS || !token_char[*p]) {
            return 0;
        }
        while (p < end && token_char[*p]) {
            p++;
        }
        if (p >= end || (*p != ':' && *p != '\0')) {
            return 0;
        }
        for (p++; p < end && (*p == ' ' || *p == '\t'); p++) { /* void */ }
        if (p >= end || *p == '\0' || *p == CR || *p == LF) {
            return 0;
        }
        for ( /* void */ ; p < end && *p != '\0'; p++) {
            c = *p;
            if ((c < 0x20 && c != '\t') || c == 0x7f) {
                return 0;
            }
        }
        /* the value's end: blanks, then CR LF or LF */
        for (p++; p < end && (*p == ' ' || *p == '\t'); p++) { /* void */ }
        if (p < end && *p == CR) {
            p++;
        }
        if (p >= end || *p != LF) {
            return 0;
        }
        p++;
    }
}


/* HTTP/2's headers as nginx decoded them (HPACK has no lines to screen), checked as
 * lua/gateway/request_check.lua checks them: at most GW_MAX_HEADERS, and no control byte but
 * tab in any value. nginx itself refuses names that are not lower-case tokens. */
static ngx_flag_t
clean_decoded_headers(ngx_http_request_t *r)
{
    ngx_list_part_t *part = &r->headers_in.headers.part;
    ngx_table_elt_t *h = part->elts;
    ngx_uint_t i, n = 0;
    u_char *p, *end;

    for (i = 0; /* void */; i++) {
        if (i >= part->nelts) {
            if (part->next == NULL) {
                return 1;
            }
            part = part->next;
            h = part->elts;
            i = 0;
        }
        if (++n > GW_MAX_HEADERS) {
            return 0;
        }
        for (p = h[i].value.data, end = p + h[i].value.len; p < end; p++) {
            if ((*p < 0x20 && *p != '\t') || *p == 0x7f) {
                return 0;
            }
        }
    }
}


static ngx_int_t
index_of(ngx_http_request_t *r, ngx_uint_t which)
{
    gateway_hit_main_conf_t *mcf = ngx_http_get_module_main_conf(r, ngx_http_gateway_hit_module);

    return mcf->var_index[which];
}


static ngx_http_variable_value_t *
variable(ngx_http_request_t *r, ngx_uint_t which)
{
    ngx_http_variable_value_t *v = ngx_http_get_indexed_variable(r, index_of(r, which));

    return (v == NULL || v->not_found) ? NULL : v;
}


static ngx_flag_t
set_variable(ngx_http_request_t *r, ngx_uint_t which, u_char *data, size_t len)
{
    ngx_http_variable_value_t *v = &r->variables[index_of(r, which)];
    u_char *copy = ngx_pnalloc(r->pool, len ? len : 1);

    if (copy == NULL) {
        return 0;
    }
    ngx_memcpy(copy, data, len);
    v->data = copy;
    v->len = len;
    v->valid = 1;
    v->no_cacheable = 0;
    v->not_found = 0;
    return 1;
}


/* A number in a shared dict: NGX_OK with it in `n`, NGX_DECLINED when the key is absent,
 * NGX_ERROR when it cannot be read or holds anything but a number. */
static ngx_int_t
read_number(ngx_shm_zone_t *zone, const u_char *key, size_t len, double *n)
{
    int type = 0, flags = 0, stale = 0;
    u_char *buf = NULL;
    size_t blen = 0;
    char *err = NULL;

    if (ngx_http_lua_ffi_shdict_get(zone, key, len, &type, &buf, &blen, n, &flags, 0, &stale,
                                    &err) != NGX_OK) {
        return NGX_ERROR;
    }
    if (type == SHDICT_TNIL) {
        return NGX_DECLINED;
    }
    return type == SHDICT_TNUMBER ? NGX_OK : NGX_ERROR;
}


/* A revocation marker (Unix time, s), or -1 when there is none. */
static double
marker(const u_char *key, size_t len)
{
    double n = 0;

    switch (read_number(revocations_zone, key, len, &n)) {
    case NGX_OK:
        return n;
    case NGX_DECLINED:
        return -1;
    default:
        /* cannot tell, or not a marker Lua wrote: as if revoked, Lua decides */
        return 1e300;
    }
}


/* Unix time (s) in a field ("1764090000" or "1764090000.123"), truncated to the millisecond;
 * -1 when it is not one. */
static double
seconds(u_char *data, size_t len)
{
    ngx_int_t ms = ngx_atofp(data, len, 3);

    return ms == NGX_ERROR ? -1 : ms / 1000.0;
}


static ngx_flag_t
hash_is(u_char *hex, size_t len, const u_char *digest)
{
    size_t i;
    ngx_int_t byte;

    if (len != HASH_HEX_LEN) {
        return 0;
    }
    for (i = 0; i < HASH_HEX_LEN / 2; i++) {
        byte = ngx_hextoi(hex + 2 * i, 2);
        if (byte == NGX_ERROR || byte != digest[i]) {
            return 0;
        }
    }
    return 1;
}


/* Splits a tab-separated value into at most `max` fields (the rest empty); the number found,
 * or 0 when there are more. */
static ngx_uint_t
split_fields(u_char *value, size_t len, record_t *rec, ngx_uint_t max)
{
    u_char *p = value, *end = value + len;
    ngx_uint_t n = 0;

    ngx_memzero(rec, sizeof(record_t));
    for ( ;; ) {
        if (n == max) {
            return 0;
        }
        rec->data[n] = p;
        while (p < end && *p != '\t') {
            p++;
        }
        rec->len[n] = p - rec->data[n];
        n++;
        if (p == end) {
            return n;
        }
        p++;
    }
}


/* Adds `by` to a number in a shared dict, created at 0 if absent with `ttl_ms` to live (0: for
 * ever; resty.core passes its seconds times 1000 too): its new value, or -1 when it cannot be
 * counted (no dict, no room, not a number). */
static double
add(ngx_shm_zone_t *zone, u_char *key, size_t len, double by, long ttl_ms)
{
    char *err = NULL;
    int forcible = 0;

    if (zone == NULL
        || ngx_http_lua_ffi_shdict_incr(zone, key, len, &by, &err, 1, 0, ttl_ms, &forcible)
           != NGX_OK) {
        return -1;
    }
    return by;
}


/* `apk <id>.<secret>` in the only shape a key is issued in (lua/gateway/access.lua's
 * parse_api_key): "apk" in any case, spaces, an id of 1-15 digits not starting with 0, a dot,
 * 43 base64url characters, nothing after. */
static ngx_flag_t
parse_api_key(ngx_str_t *credential, ngx_str_t *id, u_char **secret)
{
    u_char *p = credential->data, *end = p + credential->len;

    if (credential->len < 4 || ngx_strncasecmp(p, (u_char *) "apk ", 4) != 0) {
        return 0;
    }
    for (p += 4; p < end && *p == ' '; p++) { /* void */ }
    id->data = p;
    if (p >= end || *p < '1' || *p > '9') {
        return 0;
    }
    while (p < end && *p >= '0' && *p <= '9') {
        p++;
    }
    id->len = p - id->data;
    if (id->len > 15 || p >= end || *p != '.') {
        return 0;
    }
    *secret = ++p;
    if (end - p != 43) {
        return 0;
    }
    for ( /* void */ ; p < end; p++) {
        if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')
              || *p == '-' || *p == '_')) {
            return 0;
        }
    }
    return 1;
}


static ngx_flag_t
is_boolean(u_char *data, size_t len)
{
    return (len == 4 && ngx_strncmp(data, "true", 4) == 0)
           || (len == 5 && ngx_strncmp(data, "false", 5) == 0);
}


/* Reads `key` of a shared dict into `buf` (RECORD_BUFFER bytes): its length, or 0 when it is
 * absent, not a string, or longer than the buffer (then the Lua code decides). */
static size_t
read_string(ngx_shm_zone_t *zone, u_char *key, size_t key_len, u_char *buf)
{
    u_char *val = buf;
    size_t vlen = RECORD_BUFFER;
    int type = 0, flags = 0, stale = 0;
    double num = 0;
    char *err = NULL;

    if (ngx_http_lua_ffi_shdict_get(zone, key, key_len, &type, &val, &vlen, &num, &flags, 0,
                                    &stale, &err) != NGX_OK) {
        return 0;
    }
    if (val != buf) {
        free(val);  /* larger than the buffer: lua-nginx-module allocated it */
        return 0;
    }
    return type == SHDICT_TSTRING ? vlen : 0;
}


/* Whether something learnt about client `row` at `created` still holds (lua/gateway/cache.lua's
 * alive): no revocation of that client, or of everything, at or after that moment. */
static ngx_flag_t
alive(u_char *row, size_t len, double created)
{
    return marker(row, len) < created && marker((u_char *) "*", 1) < created;
}


/* ngx.now(): the cached time of this event loop turn, to the millisecond. */
static double
now_seconds(void)
{
    ngx_time_t *tp = ngx_timeofday();

    return tp->sec + tp->msec / 1000.0;
}


/* A client's rate limit, "<requests> <per_seconds>", as lua/gateway/ratelimit.lua's parse
 * reads it: 1-10 digits, a space, 1-5 digits, neither starting with 0, at most a day. */
static ngx_flag_t
parse_limit(u_char *p, size_t len, ngx_int_t *requests, ngx_int_t *per)
{
    u_char *end = p + len, *start = p;

    if (p == end || *p < '1' || *p > '9') {
        return 0;
    }
    while (p < end && *p >= '0' && *p <= '9') {
        p++;
    }
    if (p - start > 10 || p == end || *p != ' ') {
        return 0;
    }
    *requests = ngx_atoi(start, p - start);
    start = ++p;
    if (p == end || *p < '1' || *p > '9') {
        return 0;
    }
    while (p < end && *p >= '0' && *p <= '9') {
        p++;
    }
    if (p != end || p - start > 5) {
        return 0;
    }
    *per = ngx_atoi(start, p - start);
    return *requests != NGX_ERROR && *per != NGX_ERROR && *per <= GW_RATE_LIMIT_MAX_PER;
}


/* A request counted in a rate limit's window, and what its answer's headers will say. */
typedef struct {
    u_char key[96];
    size_t key_len;
    ngx_int_t requests, per;
    long remaining, reset;
} admission_t;


/* A rate limit window's key in the limits dict (lua/gateway/ratelimit.lua's window_key); its
 * length. */
static size_t
window_key(u_char *buf, size_t size, u_char *row, size_t row_len, ngx_int_t per, long index)
{
    return ngx_snprintf(buf, size, GW_RATE_LIMIT_PREFIX "%*s %i %l", row_len, row, per, index)
           - buf;
}


/* lua/gateway/ratelimit.lua's admit, for a request the module would pass: 1 when it fits in
 * the sliding window (counted); 0 when it does not, or when anything cannot be told (then it
 * is not counted, and the Lua code decides: it counts it itself, or answers 429). */
static ngx_flag_t
admit(u_char *row, size_t row_len, u_char *limit, size_t limit_len, admission_t *a)
{
    u_char key[sizeof(a->key)];
    size_t key_len;
    double now, elapsed, current, previous = 0, estimate;
    long index;
    ngx_int_t rc;

    if (!parse_limit(limit, limit_len, &a->requests, &a->per)) {
        return 0;
    }
    now = now_seconds();
    index = (long) floor(now / a->per);
    elapsed = now - (double) index * a->per;
    a->key_len = window_key(a->key, sizeof(a->key), row, row_len, a->per, index);
    /* Windows live two periods: the next one still weighs this one. */
    current = add(limits_zone, a->key, a->key_len, 1, 2000L * a->per);
    if (current < 0) {
        return 0;
    }
    key_len = window_key(key, sizeof(key), row, row_len, a->per, index - 1);
    rc = read_number(limits_zone, key, key_len, &previous);
    if (rc == NGX_ERROR) {
        add(limits_zone, a->key, a->key_len, -1, 0);
        return 0;
    }
    if (rc == NGX_DECLINED) {
        previous = 0;
    }
    estimate = previous * (1 - elapsed / a->per) + current;
    if (estimate > a->requests) {
        /* not counted: Lua counts it again, or refuses it */
        add(limits_zone, a->key, a->key_len, -1, 0);
        return 0;
    }
    a->remaining = (long) floor(a->requests - estimate);
    a->reset = (long) ceil(a->per - elapsed);
    if (a->reset < 1) {
        a->reset = 1;
    }
    return 1;
}


/* A response header, as the Lua code's ngx.header sets one in the access phase; NULL when
 * there is no memory for it. */
static ngx_table_elt_t *
add_header(ngx_http_request_t *r, const char *name, u_char *value, size_t len)
{
    ngx_table_elt_t *h = ngx_list_push(&r->headers_out.headers);

    if (h == NULL) {
        return NULL;
    }
    h->value.data = ngx_pnalloc(r->pool, len);
    if (h->value.data == NULL) {
        h->hash = 0;  /* an entry whose hash is 0 is not sent */
        return NULL;
    }
    ngx_memcpy(h->value.data, value, len);
    h->value.len = len;
    h->key.data = (u_char *) name;
    h->key.len = ngx_strlen(name);
    h->lowcase_key = NULL;
#if defined(nginx_version) && nginx_version >= 1023000
    h->next = NULL;
#endif
    h->hash = 1;
    return h;
}


/* The RateLimit-Policy and RateLimit headers of an admitted request (lua/gateway/ratelimit.lua
 * sets the same). */
static ngx_flag_t
announce(ngx_http_request_t *r, admission_t *a)
{
    u_char value[128], *last;
    ngx_table_elt_t *policy;

    last = ngx_snprintf(value, sizeof(value), "\"" GW_RATE_LIMIT_POLICY_NAME "\";q=%i;w=%i",
                        a->requests, a->per);
    policy = add_header(r, GW_RATE_LIMIT_POLICY_HEADER, value, last - value);
    if (policy == NULL) {
        return 0;
    }
    last = ngx_snprintf(value, sizeof(value), "\"" GW_RATE_LIMIT_POLICY_NAME "\";r=%l;t=%l",
                        a->remaining, a->reset);
    if (add_header(r, GW_RATE_LIMIT_STATE_HEADER, value, last - value) == NULL) {
        policy->hash = 0;
        return 0;
    }
    return 1;
}


/* The request into the client's rate limit if it has one (0: it does not fit, Lua's), the
 * identity into the variables, the request into the client's usage and the counters. */
static ngx_flag_t
use(ngx_http_request_t *r, record_t *rec, ngx_uint_t f_client_id, ngx_uint_t f_client_name,
    ngx_uint_t f_is_admin, ngx_uint_t f_limit, u_char *method, size_t method_len, u_char *row,
    size_t row_len, const char *counter)
{
    u_char key[64], *last;
    ngx_str_t row_str = { row_len, row };
    ngx_flag_t limited = rec->len[f_limit] != 0;
    admission_t a;

    if (limited && !admit(row, row_len, rec->data[f_limit], rec->len[f_limit], &a)) {
        return 0;
    }
    if (!set_variable(r, V_CLIENT_ID, rec->data[f_client_id], rec->len[f_client_id])
        || !set_variable(r, V_CLIENT_NAME, rec->data[f_client_name], rec->len[f_client_name])
        || !set_variable(r, V_IS_ADMIN, rec->data[f_is_admin], rec->len[f_is_admin])
        || !set_variable(r, V_METHOD, method, method_len)
        || (limited && !announce(r, &a))) {
        if (limited) {
            add(limits_zone, a.key, a.key_len, -1, 0);  /* Lua counts it when it passes it */
        }
        return 0;
    }
    last = ngx_snprintf(key, sizeof(key), GW_USAGE_ALLOWED_PREFIX "%T %V",
                        ngx_time() / GW_USAGE_GENERATION_S, &row_str);
    add(limits_zone, key, last - key, 1, GW_USAGE_KEEP_S * 1000L);
    add(metrics_zone, (u_char *) counter, ngx_strlen(counter), 1, 0);
    add(metrics_zone, (u_char *) GW_MODULE_HIT_COUNTER, sizeof(GW_MODULE_HIT_COUNTER) - 1, 1, 0);
    return 1;
}


/* An API key against its key record (lua/gateway/keys.lua's verdict "pass"). */
static ngx_flag_t
key_record_hit(ngx_http_request_t *r, ngx_str_t *id, u_char *secret, ngx_int_t max_age_ms)
{
    u_char buf[RECORD_BUFFER], digest[SHA256_DIGEST_LENGTH];
    size_t len;
    double created, now, until;
    record_t rec;
    SHA256_CTX sha;

    if (keys_zone == NULL) {
        return 0;
    }
    len = read_string(keys_zone, id->data, id->len, buf);
    /* a record stored before rate limits has no limit field */
    if (len == 0 || split_fields(buf, len, &rec, F_COUNT) < F_LIMIT) {
        return 0;
    }
    if (rec.len[F_KIND] != 5 || ngx_strncmp(rec.data[F_KIND], "known", 5) != 0
        || rec.len[F_CLIENT_ID] == 0 || !is_boolean(rec.data[F_IS_ADMIN], rec.len[F_IS_ADMIN])) {
        return 0;  /* an unknown id, or a damaged record: Lua's */
    }
    created = seconds(rec.data[F_CREATED], rec.len[F_CREATED]);
    if (created < 0) {
        return 0;
    }
    now = now_seconds();
    if (now - created >= max_age_ms / 2000.0) {
        return 0;  /* past half its life: Lua passes it and refreshes the record */
    }
    if (!alive(id->data, id->len, created)) {
        return 0;  /* revoked since it was learnt */
    }

    SHA256_Init(&sha);
    SHA256_Update(&sha, secret, 43);
    SHA256_Final(digest, &sha);
    if (!hash_is(rec.data[F_HASH], rec.len[F_HASH], digest)) {
        /* a rotated-out secret passes within its grace only */
        if (!hash_is(rec.data[F_PREVIOUS_HASH], rec.len[F_PREVIOUS_HASH], digest)) {
            return 0;
        }
        until = seconds(rec.data[F_PREVIOUS_UNTIL], rec.len[F_PREVIOUS_UNTIL]);
        if (rec.len[F_PREVIOUS_UNTIL] == 0 || until < 0 || now >= until) {
            return 0;
        }
    }
    if (rec.len[F_EXPIRES_AT] != 0) {
        until = seconds(rec.data[F_EXPIRES_AT], rec.len[F_EXPIRES_AT]);
        if (until < 0 || now >= until) {
            return 0;
        }
    }
    /* The key id is the client's row (lua/gateway/keys.lua). */
    return use(r, &rec, F_CLIENT_ID, F_CLIENT_NAME, F_IS_ADMIN, F_LIMIT, (u_char *) "apk", 3,
               id->data, id->len, GW_KEY_HIT_COUNTER);
}


/* Whether the key table's replica is trusted now (lua/gateway/key_table.lua's lookup): loaded
 * whole, and its sidecar said the feed was live within key_table.trust_s. */
static ngx_flag_t
key_table_trusted(void)
{
    double until = 0;

    return key_table_zone != NULL
           && read_number(key_table_zone, (u_char *) GW_KEY_TABLE_TRUSTED_UNTIL,
                          sizeof(GW_KEY_TABLE_TRUSTED_UNTIL) - 1, &until) == NGX_OK
           && now_seconds() < until;
}


/* A length byte, then that many bytes of text at *p (before end): the text in `field`, *p past
 * it; 0 when it runs past the end. */
static ngx_flag_t
key_table_field(u_char **p, u_char *end, u_char **data, size_t *len)
{
    if (*p >= end || (size_t) (end - *p - 1) < (size_t) **p) {
        return 0;
    }
    *len = **p;
    *data = *p + 1;
    *p += 1 + *len;
    return 1;
}


/* An API key against its record in the key table (lua/gateway/key_table.lua's decode, then
 * lua/gateway/keys.lua's verdict "pass"): the bytes of common/contract.ts KEY_RECORD. A record
 * that is absent, damaged or does not pass is Lua's to refuse. */
static ngx_flag_t
key_table_hit(ngx_http_request_t *r, ngx_str_t *id, u_char *secret)
{
    u_char buf[RECORD_BUFFER], digest[SHA256_DIGEST_LENGTH], *p, *end, *text, flags;
    size_t len, text_len;
    double now, until;
    ngx_flag_t right = 0;
    record_t rec;
    SHA256_CTX sha;

    len = read_string(key_table_zone, id->data, id->len, buf);
    if (len < 2 || buf[0] != GW_KEY_RECORD_VERSION) {
        return 0;
    }
    flags = buf[1];
    if (flags & GW_KEY_RECORD_GONE) {
        return 0;  /* a deleted client: Lua refuses it */
    }
    p = buf + 2;
    end = buf + len;
    now = now_seconds();

    SHA256_Init(&sha);
    SHA256_Update(&sha, secret, 43);
    SHA256_Final(digest, &sha);
    if (flags & GW_KEY_RECORD_KEY) {
        if (end - p < GW_KEY_RECORD_HASH_BYTES) {
            return 0;
        }
        right = CRYPTO_memcmp(p, digest, GW_KEY_RECORD_HASH_BYTES) == 0;
        p += GW_KEY_RECORD_HASH_BYTES;
    }
    if (flags & GW_KEY_RECORD_PREVIOUS) {
        /* a rotated-out secret passes within its grace only */
        if (end - p < GW_KEY_RECORD_HASH_BYTES) {
            return 0;
        }
        text = p;
        p += GW_KEY_RECORD_HASH_BYTES;
        if (!key_table_field(&p, end, &rec.data[0], &rec.len[0])) {
            return 0;
        }
        if (!right && CRYPTO_memcmp(text, digest, GW_KEY_RECORD_HASH_BYTES) == 0) {
            until = seconds(rec.data[0], rec.len[0]);
            right = until >= 0 && now < until;
        }
    }
    if (!right) {
        return 0;
    }
    if (flags & GW_KEY_RECORD_EXPIRES) {
        if (!key_table_field(&p, end, &text, &text_len)) {
            return 0;
        }
        until = seconds(text, text_len);
        if (until < 0 || now >= until) {
            return 0;
        }
    }
    ngx_memzero(&rec, sizeof(record_t));
    if (flags & GW_KEY_RECORD_LIMIT) {
        if (!key_table_field(&p, end, &rec.data[F_LIMIT], &rec.len[F_LIMIT])
            || rec.len[F_LIMIT] == 0)
        {
            return 0;
        }
    }
    /* The key id is the client's row and its id; the rest of the record is its name. */
    rec.data[F_CLIENT_ID] = id->data;
    rec.len[F_CLIENT_ID] = id->len;
    rec.data[F_CLIENT_NAME] = p;
    rec.len[F_CLIENT_NAME] = end - p;
    if (flags & GW_KEY_RECORD_ADMIN) {
        rec.data[F_IS_ADMIN] = (u_char *) "true";
        rec.len[F_IS_ADMIN] = 4;
    } else {
        rec.data[F_IS_ADMIN] = (u_char *) "false";
        rec.len[F_IS_ADMIN] = 5;
    }
    return use(r, &rec, F_CLIENT_ID, F_CLIENT_NAME, F_IS_ADMIN, F_LIMIT, (u_char *) "apk", 3,
               id->data, id->len, GW_KEY_HIT_COUNTER);
}


/* Any other credential against the decision cache (lua/gateway/cache.lua's get). */
static ngx_flag_t
cached_hit(ngx_http_request_t *r, ngx_str_t *credential)
{
    ngx_http_variable_value_t *inputs;
    u_char buf[RECORD_BUFFER], key[1 + SHA256_DIGEST_LENGTH];
    size_t len;
    double created;
    record_t rec;
    SHA256_CTX sha;

    if (!hmac_ready || decisions_zone == NULL) {
        return 0;
    }
    inputs = variable(r, V_INPUTS);
    if (inputs == NULL) {
        return 0;
    }
    /* "d" and HMAC-SHA-256(credential NUL inputs), as lua/gateway/keying.lua's key() */
    key[0] = 'd';
    sha = hmac_inner;
    SHA256_Update(&sha, credential->data, credential->len);
    SHA256_Update(&sha, "", 1);
    SHA256_Update(&sha, inputs->data, inputs->len);
    SHA256_Final(key + 1, &sha);
    sha = hmac_outer;
    SHA256_Update(&sha, key + 1, SHA256_DIGEST_LENGTH);
    SHA256_Final(key + 1, &sha);

    len = read_string(decisions_zone, key, sizeof(key), buf);
    if (len == 0 || split_fields(buf, len, &rec, D_COUNT) < D_LIMIT) {
        return 0;
    }
    if (rec.len[D_ROW] == 0 || rec.len[D_METHOD] == 0
        || !is_boolean(rec.data[D_IS_ADMIN], rec.len[D_IS_ADMIN])) {
        return 0;  /* a damaged entry: Lua's */
    }
    created = seconds(rec.data[D_CREATED], rec.len[D_CREATED]);
    if (created < 0 || !alive(rec.data[D_ROW], rec.len[D_ROW], created)) {
        return 0;
    }
    /* Its lifetime (never past a token's exp) is the dict entry's own: an expired one reads as
     * absent above. */
    return use(r, &rec, D_CLIENT_ID, D_CLIENT_NAME, D_IS_ADMIN, D_LIMIT, rec.data[D_METHOD],
               rec.len[D_METHOD], rec.data[D_ROW], rec.len[D_ROW], GW_CACHE_HIT_COUNTER);
}


/* 1: a hit, decided and used (variables set, counted); 0: the Lua code decides. */
static ngx_flag_t
decide_hit(ngx_http_request_t *r)
{
    ngx_http_variable_value_t *v;
    ngx_int_t max_age_ms;
    ngx_str_t id, *credential;
    u_char *secret;
    ngx_flag_t api_keys;

    if (r != r->main || revocations_zone == NULL) {
        return 0;
    }
    if (!(r->method & GW_ALLOWED_METHODS)) {
        return 0;
    }
    if (r->http_version == NGX_HTTP_VERSION_10 || r->http_version == NGX_HTTP_VERSION_11) {
        if (!clean_header_block(r)) {
            return 0;
        }
#if (NGX_HTTP_V2)
    } else if (r->http_version == NGX_HTTP_VERSION_20) {
        if (!clean_decoded_headers(r)) {
            return 0;
        }
#endif
    } else {
        return 0;
    }
    if (r->headers_in.authorization == NULL) {
        return 0;
    }
    credential = &r->headers_in.authorization->value;
    v = variable(r, V_API_KEYS);
    api_keys = v != NULL && v->len == 4 && ngx_strncmp(v->data, "true", 4) == 0;
    /* As the Lua code: an API key in the issued shape is decided by its record in the trusted
     * key table (absent there: Lua's), else by its learnt key record alone (a record that does
     * not pass it is Lua's to refuse or ask about); anything else by the decision cache. */
    if (api_keys && parse_api_key(credential, &id, &secret) && key_table_trusted()) {
        return key_table_hit(r, &id, secret);
    }
    v = variable(r, V_MAX_AGE);
    max_age_ms = v == NULL ? NGX_ERROR : ngx_atoi(v->data, v->len);
    if (max_age_ms == NGX_ERROR || max_age_ms <= 0) {
        return 0;
    }
    if (api_keys && parse_api_key(credential, &id, &secret)) {
        return key_record_hit(r, &id, secret, max_age_ms);
    }
    return cached_hit(r, credential);
}


static ngx_int_t
gateway_hit_access_handler(ngx_http_request_t *r)
{
    gateway_hit_loc_conf_t *conf = ngx_http_get_module_loc_conf(r, ngx_http_gateway_hit_module);

    if (conf->enabled && decide_hit(r)) {
        /* What Lua's handler returns when its code ends without ngx.exit (access granted). */
        return NGX_OK;
    }
    return ngx_http_lua_access_handler(r);
}
