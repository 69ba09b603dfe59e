/*
 * The module's bridge to the shared dicts (resty/core/shdict.lua's twin):
 * lua-nginx-module's exported functions, called as resty.core calls them, and
 * the zones the module reads, found in each worker. The one file that knows
 * lua-nginx-module's value types.
 */
#include "ngx_http_gateway_hit_module.h"


/* lua-nginx-module's exported functions (resty/core/shdict.lua declares the
 * same). */
ngx_shm_zone_t *ngx_http_lua_find_zone(u_char *name_data, size_t name_len);
int ngx_http_lua_ffi_shdict_get(void *zone, const unsigned char *key,
    size_t key_len, int *value_type, unsigned char **str_value_buf,
    size_t *str_value_len, double *num_value, int *user_flags, int get_stale,
    int *is_stale, char **errmsg);
int ngx_http_lua_ffi_shdict_incr(void *zone, const unsigned char *key,
    size_t key_len, double *value, char **err, int has_init, double init,
    long init_ttl, int *forcible);

/* lua-nginx-module's value types in a shared dict (Lua's): nil is what a
 * missing key reads. */
#define NGX_HTTP_GATEWAY_HIT_TNIL     0
#define NGX_HTTP_GATEWAY_HIT_TNUMBER  3
#define NGX_HTTP_GATEWAY_HIT_TSTRING  4


static ngx_shm_zone_t *ngx_http_gateway_hit_find_zone(const char *name);


ngx_shm_zone_t  *ngx_http_gateway_hit_keys;
ngx_shm_zone_t  *ngx_http_gateway_hit_revocations;
ngx_shm_zone_t  *ngx_http_gateway_hit_limits;
ngx_shm_zone_t  *ngx_http_gateway_hit_metrics;
ngx_shm_zone_t  *ngx_http_gateway_hit_decisions;
ngx_shm_zone_t  *ngx_http_gateway_hit_key_table_zone;


void
ngx_http_gateway_hit_find_zones(void)
{
    ngx_http_gateway_hit_keys = ngx_http_gateway_hit_find_zone(GW_KEYS_DICT);
    ngx_http_gateway_hit_revocations =
        ngx_http_gateway_hit_find_zone(GW_REVOCATIONS_DICT);
    ngx_http_gateway_hit_limits =
        ngx_http_gateway_hit_find_zone(GW_LIMITS_DICT);
    ngx_http_gateway_hit_metrics =
        ngx_http_gateway_hit_find_zone(GW_METRICS_DICT);
    ngx_http_gateway_hit_decisions =
        ngx_http_gateway_hit_find_zone(GW_DECISIONS_DICT);
    ngx_http_gateway_hit_key_table_zone =
        ngx_http_gateway_hit_find_zone(GW_KEY_TABLE_DICT);
}


/* A number in a shared dict: NGX_OK with it in `n`, NGX_DECLINED when the key
 * is absent, NGX_ERROR when it cannot be read or holds anything but a number.
 */
ngx_int_t
ngx_http_gateway_hit_read_number(ngx_shm_zone_t *zone, const u_char *key,
    size_t len, double *n)
{
    int      type = 0, flags = 0, stale = 0;
    char    *err = NULL;
    u_char   text[32], *buf = text;
    size_t   blen = sizeof(text);

    if (ngx_http_lua_ffi_shdict_get(zone, key, len, &type, &buf, &blen, n,
                                    &flags, 0, &stale, &err)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    /* A string where a number belongs: lua-nginx-module copied it into `text`,
     * or into memory it allocated when it was longer, which is ours to free. */
    if (buf != text) {
        free(buf);
    }

    if (type == NGX_HTTP_GATEWAY_HIT_TNIL) {
        return NGX_DECLINED;
    }

    return type == NGX_HTTP_GATEWAY_HIT_TNUMBER ? NGX_OK : NGX_ERROR;
}


/* Reads `key` of a shared dict into `buf` (NGX_HTTP_GATEWAY_HIT_RECORD_BUFFER
 * bytes): its length, or 0 when it is absent, not a string, or longer than the
 * buffer (then the Lua code decides). */
size_t
ngx_http_gateway_hit_read_string(ngx_shm_zone_t *zone, u_char *key,
    size_t key_len, u_char *buf)
{
    int      type = 0, flags = 0, stale = 0;
    char    *err = NULL;
    u_char  *val = buf;
    size_t   vlen = NGX_HTTP_GATEWAY_HIT_RECORD_BUFFER;
    double   num = 0;

    if (ngx_http_lua_ffi_shdict_get(zone, key, key_len, &type, &val, &vlen,
                                    &num, &flags, 0, &stale, &err)
        != NGX_OK)
    {
        return 0;
    }

    if (val != buf) {
        free(val);  /* larger than the buffer: lua-nginx-module allocated it */
        return 0;
    }

    return type == NGX_HTTP_GATEWAY_HIT_TSTRING ? vlen : 0;
}


/* Adds `by` to a number in a shared dict, created at 0 if absent with `ttl_ms`
 * to live (0: for ever; resty.core passes its seconds times 1000 too): its new
 * value, or -1 when it cannot be counted (no dict, no room, not a number). */
double
ngx_http_gateway_hit_add(ngx_shm_zone_t *zone, u_char *key, size_t len,
    double by, long ttl_ms)
{
    int    forcible = 0;
    char  *err = NULL;

    if (zone == NULL
        || ngx_http_lua_ffi_shdict_incr(zone, key, len, &by, &err, 1, 0, ttl_ms,
                                        &forcible)
           != NGX_OK)
    {
        return -1;
    }

    return by;
}


/* Adds `by` to a counter of the metrics dict (GW_*_COUNTER), kept for ever. */
void
ngx_http_gateway_hit_counter_add(const char *name, double by)
{
    (void) ngx_http_gateway_hit_add(ngx_http_gateway_hit_metrics,
                                    (u_char *) name, ngx_strlen(name), by, 0);
}


/* Takes 1 from a number in a shared dict only if it is there: an absent one is
 * not made (at -1 and without an expiry). */
ngx_int_t
ngx_http_gateway_hit_decrement(ngx_shm_zone_t *zone, u_char *key, size_t len)
{
    int     forcible = 0;
    char   *err = NULL;
    double  by = -1;

    return ngx_http_lua_ffi_shdict_incr(zone, key, len, &by, &err, 0, 0, 0,
                                        &forcible);
}


static ngx_shm_zone_t *
ngx_http_gateway_hit_find_zone(const char *name)
{
    return ngx_http_lua_find_zone((u_char *) name, ngx_strlen(name));
}
