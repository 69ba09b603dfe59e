/*
 * The gateway's nginx module: a seen API key's hit decided in C, without entering Lua's access
 * phase (docs/decisions/20261125-hit-in-c.md). The Lua access code's coroutine, checks and
 * variable writes cost nginx 15-20 µs per hit; this path costs about 4.
 *
 * How: after the configuration is read, lua-nginx-module's access handler is replaced in the
 * phase engine by gateway_hit_access_handler, which calls it unchanged unless the request's
 * location says `gateway_hit on;` (only default.conf's `location /` does: a location added by
 * hand, management and the console always go to Lua) and the request is plainly a hit:
 *
 *   HTTP/1.0 or 1.1, an allowed method, a header block whose every line is a token, a colon
 *   and a value without control bytes (at most GW_MAX_HEADERS lines), API keys on, the cache
 *   on, `Authorization: apk <id>.<secret>` in the issued shape, a live "known" key record for
 *   <id> in the keys dict (no revocation marker of that client or of everything since it was
 *   learnt, not past half its life, no rate limit), whose current hash (or rotated-out hash,
 *   within its grace) is the SHA-256 of the secret, and a client not past its expiry.
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
    NULL, NULL,                     /* main conf */
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

enum { V_API_KEYS, V_MAX_AGE, V_CLIENT_ID, V_CLIENT_NAME, V_IS_ADMIN, V_METHOD, V_COUNT };

static ngx_str_t var_names[V_COUNT] = {
    ngx_string(GW_API_KEYS_VARIABLE), ngx_string(GW_MAX_AGE_VARIABLE),
    ngx_string(GW_CLIENT_ID_VARIABLE), ngx_string(GW_CLIENT_NAME_VARIABLE),
    ngx_string(GW_IS_ADMIN_VARIABLE), ngx_string(GW_METHOD_VARIABLE),
};
static ngx_int_t var_index[V_COUNT];
/* Whether any location said `gateway_hit on;`: without one no variable is looked up, so a
 * configuration that does not use the module needs none of the variables above. */
static ngx_flag_t used;

/* Found in each worker (lua-nginx-module looks in ngx_cycle, the new cycle only by then). */
static ngx_shm_zone_t *keys_zone, *revocations_zone, *limits_zone, *metrics_zone;

/* RFC 9110's token characters. */
static u_char token_char[256];

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

    ngx_conf_init_value(conf->enabled, 0);
    if (conf->enabled) {
        used = 1;
    }
    return NGX_CONF_OK;
}


static ngx_int_t
gateway_hit_postconfiguration(ngx_conf_t *cf)
{
    ngx_uint_t i;
    const char *extra = "!#$%&'*+-.^_`|~";

    for (i = 0; i < 256; i++) {
        token_char[i] = (i >= '0' && i <= '9') || (i >= 'a' && i <= 'z')
                        || (i >= 'A' && i <= 'Z');
    }
    for (; *extra; extra++) {
        token_char[(u_char) *extra] = 1;
    }
    if (!used) {
        return NGX_OK;
    }
    for (i = 0; i < V_COUNT; i++) {
        var_index[i] = ngx_http_get_variable_index(cf, &var_names[i]);
        if (var_index[i] == NGX_ERROR) {
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
    ngx_http_phase_handler_t *ph;

    cmcf = ngx_http_cycle_get_module_main_conf(cycle, ngx_http_core_module);
    if (cmcf == NULL || !used) {
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
    if (!used) {
        return NGX_OK;
    }
    keys_zone = find_zone(GW_KEYS_DICT);
    revocations_zone = find_zone(GW_REVOCATIONS_DICT);
    limits_zone = find_zone(GW_LIMITS_DICT);
    metrics_zone = find_zone(GW_METRICS_DICT);
    return NGX_OK;
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


static ngx_http_variable_value_t *
variable(ngx_http_request_t *r, ngx_uint_t which)
{
    ngx_http_variable_value_t *v = ngx_http_get_indexed_variable(r, var_index[which]);

    return (v == NULL || v->not_found) ? NULL : v;
}


static ngx_flag_t
set_variable(ngx_http_request_t *r, ngx_uint_t which, u_char *data, size_t len)
{
    ngx_http_variable_value_t *v = &r->variables[var_index[which]];
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


/* A revocation marker (Unix time, s), or -1 when there is none. */
static double
marker(const u_char *key, size_t len)
{
    int type = 0, flags = 0, stale = 0;
    u_char *buf = NULL;
    size_t blen = 0;
    double n = 0;
    char *err = NULL;

    if (ngx_http_lua_ffi_shdict_get(revocations_zone, key, len, &type, &buf, &blen, &n, &flags,
                                    0, &stale, &err) != NGX_OK) {
        return 1e300;  /* cannot tell: as if revoked, Lua decides */
    }
    if (type == SHDICT_TNIL) {
        return -1;
    }
    /* anything but a number is not a marker Lua wrote: as if it revoked everything */
    return type == SHDICT_TNUMBER ? n : 1e300;
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


static ngx_flag_t
split_record(u_char *value, size_t len, record_t *rec)
{
    u_char *p = value, *end = value + len;
    ngx_uint_t n = 0;

    ngx_memzero(rec, sizeof(record_t));
    for ( ;; ) {
        if (n == F_COUNT) {
            return 0;
        }
        rec->data[n] = p;
        while (p < end && *p != '\t') {
            p++;
        }
        rec->len[n] = p - rec->data[n];
        n++;
        if (p == end) {
            break;
        }
        p++;
    }
    return n >= F_LIMIT;  /* a record stored before rate limits has no limit field */
}


/* Adds 1 to a counter, created at 0 if absent with `ttl_ms` to live (0: for ever; resty.core
 * passes its seconds times 1000 too). */
static void
count(ngx_shm_zone_t *zone, u_char *key, size_t len, long ttl_ms)
{
    double one = 1;
    char *err = NULL;
    int forcible = 0;

    if (zone != NULL) {
        ngx_http_lua_ffi_shdict_incr(zone, key, len, &one, &err, 1, 0, ttl_ms, &forcible);
    }
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


/* 1: a hit, decided and used (variables set, counted); 0: the Lua code decides. */
static ngx_flag_t
decide_hit(ngx_http_request_t *r)
{
    ngx_http_variable_value_t *v;
    ngx_int_t max_age_ms;
    ngx_str_t id;
    u_char *secret, valbuf[RECORD_BUFFER], *val = valbuf, digest[SHA256_DIGEST_LENGTH];
    u_char key[64], *last;
    size_t vlen = sizeof(valbuf);
    int type = 0, flags = 0, stale = 0;
    double num = 0, created, now, until;
    char *err = NULL;
    ngx_time_t *tp;
    record_t rec;
    SHA256_CTX sha;

    if (r != r->main || keys_zone == NULL || revocations_zone == NULL) {
        return 0;
    }
    if (r->http_version != NGX_HTTP_VERSION_10 && r->http_version != NGX_HTTP_VERSION_11) {
        return 0;  /* HTTP/2's headers are checked by Lua */
    }
    if (!(r->method & GW_ALLOWED_METHODS) || !clean_header_block(r)) {
        return 0;
    }
    if (r->headers_in.authorization == NULL) {
        return 0;
    }
    v = variable(r, V_API_KEYS);
    if (v == NULL || v->len != 4 || ngx_strncmp(v->data, "true", 4) != 0) {
        return 0;
    }
    v = variable(r, V_MAX_AGE);
    max_age_ms = v == NULL ? NGX_ERROR : ngx_atoi(v->data, v->len);
    if (max_age_ms == NGX_ERROR || max_age_ms <= 0) {
        return 0;
    }
    if (!parse_api_key(&r->headers_in.authorization->value, &id, &secret)) {
        return 0;
    }

    if (ngx_http_lua_ffi_shdict_get(keys_zone, id.data, id.len, &type, &val, &vlen, &num, &flags,
                                    0, &stale, &err) != NGX_OK) {
        return 0;
    }
    if (val != valbuf) {
        free(val);  /* larger than the buffer: lua-nginx-module allocated it */
        return 0;
    }
    if (type != SHDICT_TSTRING || !split_record(val, vlen, &rec)) {
        return 0;
    }
    if (rec.len[F_KIND] != 5 || ngx_strncmp(rec.data[F_KIND], "known", 5) != 0
        || rec.len[F_LIMIT] != 0 || rec.len[F_CLIENT_ID] == 0
        || !((rec.len[F_IS_ADMIN] == 4 && ngx_strncmp(rec.data[F_IS_ADMIN], "true", 4) == 0)
             || (rec.len[F_IS_ADMIN] == 5
                 && ngx_strncmp(rec.data[F_IS_ADMIN], "false", 5) == 0))) {
        return 0;  /* an unknown id, a rate-limited client, or a damaged record: Lua's */
    }
    created = seconds(rec.data[F_CREATED], rec.len[F_CREATED]);
    if (created < 0) {
        return 0;
    }
    tp = ngx_timeofday();
    now = tp->sec + tp->msec / 1000.0;
    if (now - created >= max_age_ms / 2000.0) {
        return 0;  /* past half its life: Lua passes it and refreshes the record */
    }
    if (marker(id.data, id.len) >= created || marker((u_char *) "*", 1) >= created) {
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

    if (!set_variable(r, V_CLIENT_ID, rec.data[F_CLIENT_ID], rec.len[F_CLIENT_ID])
        || !set_variable(r, V_CLIENT_NAME, rec.data[F_CLIENT_NAME], rec.len[F_CLIENT_NAME])
        || !set_variable(r, V_IS_ADMIN, rec.data[F_IS_ADMIN], rec.len[F_IS_ADMIN])
        || !set_variable(r, V_METHOD, (u_char *) "apk", 3)) {
        return 0;
    }
    /* The key id is the client's row (lua/gateway/keys.lua). */
    last = ngx_snprintf(key, sizeof(key), GW_USAGE_ALLOWED_PREFIX "%T %V",
                        tp->sec / GW_USAGE_GENERATION_S, &id);
    count(limits_zone, key, last - key, GW_USAGE_KEEP_S * 1000L);
    count(metrics_zone, (u_char *) GW_KEY_HIT_COUNTER, sizeof(GW_KEY_HIT_COUNTER) - 1, 0);
    count(metrics_zone, (u_char *) GW_MODULE_HIT_COUNTER,
          sizeof(GW_MODULE_HIT_COUNTER) - 1, 0);
    return 1;
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
