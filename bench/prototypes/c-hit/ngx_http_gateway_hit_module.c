/*
 * MEASUREMENT PROTOTYPE, not part of the gateway: what a seen API key would cost nginx if its
 * hit were decided in C, without entering Lua's access phase (issue 23, the 0.90 rows;
 * docs/decisions/20261125-miss-path.md, "A hit decided in C: the prototype").
 *
 * It wraps lua-nginx-module's access handler in the phase engine. In a location with
 * `gateway_hit on;`, a request that is plainly a hit (HTTP/1.x, an allowed method, a clean
 * header block, `apk <id>.<secret>`, a live "known" key record in gateway_keys whose hash is
 * the secret's SHA-256, no rate limit, no refresh due) gets the identity variables set and its
 * usage counted here, and Lua's handler is not entered. Anything else, whatever it is, goes to
 * Lua's handler unchanged: this code only ever says "yes" where the Lua code would, never "no".
 *
 * Not done here (the gap to a real design): the per-worker key_hit metric, HTTP/2, header blocks
 * in large buffers, and tests. Built against Debian 12's nginx-dev 1.22.1 and
 * libnginx-mod-http-lua 0.10.23 (whose ffi shdict functions it calls) by build.sh.
 */
#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/sha.h>

/* lua-nginx-module 0.10.23's exported functions (resty/core/shdict.lua declares the same). */
ngx_shm_zone_t *ngx_http_lua_find_zone(u_char *name_data, size_t name_len);
int ngx_http_lua_ffi_shdict_get(void *zone, const unsigned char *key, size_t key_len,
    int *value_type, unsigned char **str_value_buf, size_t *str_value_len, double *num_value,
    int *user_flags, int get_stale, int *is_stale, char **errmsg);
int ngx_http_lua_ffi_shdict_incr(void *zone, const unsigned char *key, size_t key_len,
    double *value, char **err, int has_init, double init, long init_ttl, int *forcible);
ngx_int_t ngx_http_lua_access_handler(ngx_http_request_t *r);

#define SHDICT_TNUMBER 3
#define SHDICT_TSTRING 4
#define MAX_HEADERS 100
#define USAGE_GENERATION_S 5
#define USAGE_KEEP_S 3600

typedef struct {
    ngx_flag_t enabled;
} gateway_hit_loc_conf_t;

static ngx_int_t gateway_hit_init_module(ngx_cycle_t *cycle);
static ngx_int_t gateway_hit_init_process(ngx_cycle_t *cycle);
static void *gateway_hit_create_loc_conf(ngx_conf_t *cf);
static char *gateway_hit_merge_loc_conf(ngx_conf_t *cf, void *parent, void *child);
static ngx_int_t gateway_hit_postconfiguration(ngx_conf_t *cf);

static ngx_command_t gateway_hit_commands[] = {
    { ngx_string("gateway_hit"),
      NGX_HTTP_LOC_CONF | NGX_CONF_FLAG,
      ngx_conf_set_flag_slot,
      NGX_HTTP_LOC_CONF_OFFSET,
      offsetof(gateway_hit_loc_conf_t, enabled),
      NULL },
    ngx_null_command
};

static ngx_http_module_t gateway_hit_ctx = {
    NULL, gateway_hit_postconfiguration, NULL, NULL, NULL, NULL,
    gateway_hit_create_loc_conf, gateway_hit_merge_loc_conf
};

ngx_module_t ngx_http_gateway_hit_module = {
    NGX_MODULE_V1, &gateway_hit_ctx, gateway_hit_commands, NGX_HTTP_MODULE,
    NULL, gateway_hit_init_module, gateway_hit_init_process, NULL, NULL, NULL, NULL,
    NGX_MODULE_V1_PADDING
};

static ngx_str_t var_names[] = {
    ngx_string("api_keys_enabled"), ngx_string("auth_cache_max_age_ms"),
    ngx_string("client_id"), ngx_string("client_name"), ngx_string("client_is_admin"),
    ngx_string("client_auth_method"),
};
enum { V_API_KEYS, V_MAX_AGE, V_CLIENT_ID, V_CLIENT_NAME, V_IS_ADMIN, V_METHOD, V_COUNT };
static ngx_int_t var_index[V_COUNT];

static ngx_shm_zone_t *keys_zone, *revocations_zone, *limits_zone;

static u_char token_char[256];

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

/* Off unless said in this very location: a location added by hand goes through Lua. */
static char *
gateway_hit_merge_loc_conf(ngx_conf_t *cf, void *parent, void *child)
{
    gateway_hit_loc_conf_t *conf = child;
    ngx_conf_init_value(conf->enabled, 0);
    return NGX_CONF_OK;
}

static ngx_int_t
gateway_hit_postconfiguration(ngx_conf_t *cf)
{
    ngx_uint_t i;
    const char *tokens = "!#$%&'*+-.^_`|~";
    for (i = 0; i < V_COUNT; i++) {
        var_index[i] = ngx_http_get_variable_index(cf, &var_names[i]);
        if (var_index[i] == NGX_ERROR) {
            return NGX_ERROR;
        }
    }
    for (i = 0; i < 256; i++) {
        token_char[i] = (i >= '0' && i <= '9') || (i >= 'a' && i <= 'z') || (i >= 'A' && i <= 'Z');
    }
    for (; *tokens; tokens++) {
        token_char[(u_char) *tokens] = 1;
    }
    return NGX_OK;
}

static ngx_int_t gateway_hit_access_handler(ngx_http_request_t *r);

/* After the configuration is read, in the master: Lua's access handler becomes ours. */
static ngx_int_t
gateway_hit_init_module(ngx_cycle_t *cycle)
{
    ngx_uint_t i, n;
    ngx_http_core_main_conf_t *cmcf;
    ngx_http_phase_handler_t *ph;

    if (ngx_http_cycle_get_module_main_conf(cycle, ngx_http_core_module) == NULL) {
        return NGX_OK;
    }
    cmcf = ngx_http_cycle_get_module_main_conf(cycle, ngx_http_core_module);
    ph = cmcf->phase_engine.handlers;
    n = 0;
    for (i = 0; ph[i].checker; i++) {
        if (ph[i].handler == ngx_http_lua_access_handler) {
            ph[i].handler = gateway_hit_access_handler;
            n++;
        }
    }
    ngx_log_error(NGX_LOG_NOTICE, cycle->log, 0, "gateway_hit: wrapped %ui access handler(s)", n);
    return NGX_OK;
}

/* In each worker: lua-nginx-module finds zones in ngx_cycle, which is the new cycle only now. */
static ngx_int_t
gateway_hit_init_process(ngx_cycle_t *cycle)
{
    keys_zone = ngx_http_lua_find_zone((u_char *) "gateway_keys", sizeof("gateway_keys") - 1);
    revocations_zone = ngx_http_lua_find_zone((u_char *) "gateway_revocations",
        sizeof("gateway_revocations") - 1);
    limits_zone = ngx_http_lua_find_zone((u_char *) "gateway_limits", sizeof("gateway_limits") - 1);
    return NGX_OK;
}

/* HTTP/1's header block as nginx left it in its buffer, where it wrote a NUL over each name's
 * colon and at each value's end (over its CR or first trailing blank): every line a token, the
 * colon, a value that is not empty and has no control bytes; at most MAX_HEADERS lines.
 * Stricter than the Lua screen (an empty value goes to Lua): doubt sends the request to Lua. */
static ngx_flag_t
clean_header_block(ngx_http_request_t *r)
{
    u_char *p, *end, c;
    ngx_uint_t lines = 0;
    ngx_buf_t *b = r->header_in;

    if (r->request_line.data < b->start || r->request_line.data >= b->last
        || b->pos > b->last || r->request_line.data >= b->pos) {
        return 0;
    }
    p = r->request_line.data + r->request_line.len;
    end = b->pos;
    if (p < end && (*p == '\r' || *p == '\0')) p++;
    if (p >= end || *p != '\n') return 0;
    p++;
    for (;;) {
        if (p >= end) return 0;
        if (*p == '\r' || *p == '\n') {
            return 1; /* the empty line */
        }
        if (++lines > MAX_HEADERS) return 0;
        if (!token_char[*p]) return 0;
        while (p < end && token_char[*p]) p++;
        if (p >= end || (*p != ':' && *p != '\0')) return 0;
        for (p++; p < end && (*p == ' ' || *p == '\t'); p++) { /* void */ }
        if (p >= end || *p == '\0' || *p == '\r' || *p == '\n') return 0;
        for (; p < end; p++) {
            c = *p;
            if (c == '\0') {
                break;
            }
            if ((c < 0x20 && c != '\t') || c == 0x7f) return 0;
        }
        /* the value's end: blanks, then CR LF or LF */
        for (p++; p < end && (*p == ' ' || *p == '\t'); p++) { /* void */ }
        if (p < end && *p == '\r') p++;
        if (p >= end || *p != '\n') return 0;
        p++;
    }
}

static ngx_flag_t
var_is(ngx_http_request_t *r, ngx_uint_t which, const char *text, size_t len)
{
    ngx_http_variable_value_t *v = ngx_http_get_indexed_variable(r, var_index[which]);
    return v != NULL && !v->not_found && v->len == len && ngx_memcmp(v->data, text, len) == 0;
}

static double
var_number(ngx_http_request_t *r, ngx_uint_t which)
{
    ngx_http_variable_value_t *v = ngx_http_get_indexed_variable(r, var_index[which]);
    ngx_int_t n;
    if (v == NULL || v->not_found || v->len == 0) return -1;
    n = ngx_atoi(v->data, v->len);
    return n == NGX_ERROR ? -1 : (double) n;
}

static ngx_flag_t
set_var(ngx_http_request_t *r, ngx_uint_t which, u_char *data, size_t len)
{
    ngx_http_variable_value_t *v = &r->variables[var_index[which]];
    u_char *copy = ngx_pnalloc(r->pool, len ? len : 1);
    if (copy == NULL) return 0;
    ngx_memcpy(copy, data, len);
    v->data = copy;
    v->len = len;
    v->valid = 1;
    v->no_cacheable = 0;
    v->not_found = 0;
    return 1;
}

static double
marker(const u_char *key, size_t len)
{
    int type = 0, flags = 0, stale = 0;
    u_char *buf = NULL;
    size_t blen = 0;
    double n = 0;
    char *err = NULL;
    if (revocations_zone == NULL) return 1e300;
    if (ngx_http_lua_ffi_shdict_get(revocations_zone, key, len, &type, &buf, &blen, &n, &flags, 0,
            &stale, &err) != NGX_OK || type != SHDICT_TNUMBER) {
        return -1;
    }
    return n;
}

static ngx_int_t
hex_to_raw(const u_char *hex, size_t len, u_char *out)
{
    ngx_int_t hi, lo;
    size_t i;
    if (len != 64) return NGX_ERROR;
    for (i = 0; i < 32; i++) {
        hi = ngx_hextoi((u_char *) hex + 2 * i, 1);
        lo = ngx_hextoi((u_char *) hex + 2 * i + 1, 1);
        if (hi == NGX_ERROR || lo == NGX_ERROR) return NGX_ERROR;
        out[i] = (u_char) (hi * 16 + lo);
    }
    return NGX_OK;
}

/* 1: a hit, decided and used; 0: anything else (Lua decides). */
static ngx_flag_t
decide_hit(ngx_http_request_t *r)
{
    ngx_table_elt_t *h;
    u_char *p, *end, *id, *secret, *f[10];
    size_t id_len, flen[10];
    ngx_uint_t i, n;
    double max_age, created, now, mark, until;
    u_char valbuf[2048], *val = valbuf, digest[SHA256_DIGEST_LENGTH], stored[32];
    size_t vlen = sizeof(valbuf);
    int type = 0, flags = 0, stale = 0, forcible = 0;
    double num = 0, incr = 1;
    char *err = NULL;
    ngx_time_t *tp;
    u_char ukey[64];
    SHA256_CTX sha;

    if (r != r->main || keys_zone == NULL || limits_zone == NULL) return 0;
    if (r->http_version != NGX_HTTP_VERSION_11 && r->http_version != NGX_HTTP_VERSION_10) return 0;
    if (!(r->method & (NGX_HTTP_GET | NGX_HTTP_HEAD | NGX_HTTP_POST | NGX_HTTP_PUT
                       | NGX_HTTP_PATCH | NGX_HTTP_DELETE | NGX_HTTP_OPTIONS))) {
        return 0;
    }
    if (!clean_header_block(r)) return 0;
    h = r->headers_in.authorization;
    if (h == NULL || !var_is(r, V_API_KEYS, "true", 4)) return 0;
    max_age = var_number(r, V_MAX_AGE);
    if (max_age <= 0) return 0;

    /* apk +<id>.<secret>: id [1-9][0-9]{0,14}, secret 43 base64url characters, nothing after */
    p = h->value.data;
    end = p + h->value.len;
    if (end - p < 4 || ngx_strncasecmp(p, (u_char *) "apk ", 4) != 0) return 0;
    for (p += 4; p < end && *p == ' '; p++) { /* void */ }
    id = p;
    if (p >= end || *p < '1' || *p > '9') return 0;
    while (p < end && *p >= '0' && *p <= '9') p++;
    id_len = p - id;
    if (id_len > 15 || p >= end || *p != '.') return 0;
    secret = ++p;
    if (end - secret != 43) return 0;
    for (; p < end; p++) {
        if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')
              || *p == '-' || *p == '_')) {
            return 0;
        }
    }

    if (ngx_http_lua_ffi_shdict_get(keys_zone, id, id_len, &type, &val, &vlen, &num, &flags, 0,
            &stale, &err) != NGX_OK || type != SHDICT_TSTRING) {
        return 0;
    }
    if (val != valbuf) {
        free(val); /* larger than the buffer: lua-nginx-module malloc'd it; let Lua decide */
        return 0;
    }
    /* created kind expires_at previous_until is_admin client_id client_name hash prev [limit] */
    p = val;
    end = val + vlen;
    for (n = 0; n < 10; n++) {
        f[n] = p;
        while (p < end && *p != '\t') p++;
        flen[n] = p - f[n];
        if (p >= end) { n++; break; }
        p++;
    }
    if (n < 9 || p < end) return 0;
    for (i = n; i < 10; i++) flen[i] = 0;
    if (flen[1] != 5 || ngx_memcmp(f[1], "known", 5) != 0 || flen[9] != 0 || flen[5] == 0) {
        return 0; /* unknown id, a rate limit, or damaged: Lua's */
    }
    if (!((flen[4] == 4 && ngx_memcmp(f[4], "true", 4) == 0)
          || (flen[4] == 5 && ngx_memcmp(f[4], "false", 5) == 0))) {
        return 0;
    }
    created = ngx_atofp(f[0], flen[0], 3);
    if (created == NGX_ERROR) return 0;
    created /= 1000;
    tp = ngx_timeofday();
    now = tp->sec + tp->msec / 1000.0;
    if (now - created >= max_age / 2000) return 0; /* a refresh is due: Lua starts it */
    mark = marker(id, id_len);
    if (mark >= created) return 0;
    mark = marker((u_char *) "*", 1);
    if (mark >= created) return 0;

    /* The low-level calls: OpenSSL 3's one-shot SHA256() looks the algorithm up in its
     * provider tables every time, 4.5 µs per request here (perf), more than the hash. */
    SHA256_Init(&sha);
    SHA256_Update(&sha, secret, 43);
    SHA256_Final(digest, &sha);
    if (hex_to_raw(f[7], flen[7], stored) != NGX_OK) return 0;
    if (ngx_memcmp(digest, stored, 32) != 0) {
        if (flen[8] == 0 || hex_to_raw(f[8], flen[8], stored) != NGX_OK
            || ngx_memcmp(digest, stored, 32) != 0 || flen[3] == 0) {
            return 0;
        }
        until = ngx_atofp(f[3], flen[3], 3);
        if (until == NGX_ERROR || now >= until / 1000) return 0;
    }
    if (flen[2] != 0) {
        until = ngx_atofp(f[2], flen[2], 3);
        if (until == NGX_ERROR || now >= until / 1000) return 0;
    }

    if (!set_var(r, V_CLIENT_ID, f[5], flen[5]) || !set_var(r, V_CLIENT_NAME, f[6], flen[6])
        || !set_var(r, V_IS_ADMIN, f[4], flen[4])
        || !set_var(r, V_METHOD, (u_char *) "apk", 3)) {
        return 0;
    }
    p = ngx_snprintf(ukey, sizeof(ukey), "u%T %*s", tp->sec / USAGE_GENERATION_S, id_len, id);
    ngx_http_lua_ffi_shdict_incr(limits_zone, ukey, p - ukey, &incr, &err, 1, 0, USAGE_KEEP_S,
        &forcible);
    return 1;
}

static ngx_int_t
gateway_hit_access_handler(ngx_http_request_t *r)
{
    gateway_hit_loc_conf_t *conf = ngx_http_get_module_loc_conf(r, ngx_http_gateway_hit_module);
    if (conf->enabled && decide_hit(r)) {
        return NGX_OK;
    }
    return ngx_http_lua_access_handler(r);
}
