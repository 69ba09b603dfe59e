/*
 * What the module's nginx-side files share: ngx_http_gateway_hit_module.c, the
 * request's flow, calls the concerns' functions declared here, one file each,
 * named after its twin in lua/gateway/ (or resty.core); they read the shared
 * dicts through the bridge in ngx_http_gateway_hit_shdict.c. The pure parts,
 * built by the fuzz targets too, are in ngx_http_gateway_hit_parse.h.
 */
#ifndef NGX_HTTP_GATEWAY_HIT_MODULE_H
#define NGX_HTTP_GATEWAY_HIT_MODULE_H

#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "gateway_contract.h"
#include "ngx_http_gateway_hit_parse.h"


extern ngx_module_t  ngx_http_gateway_hit_module;


/* The variables the module reads and sets, in the order of
 * ngx_http_gateway_hit_var_names. */
enum {
    NGX_HTTP_GATEWAY_HIT_V_API_KEYS,
    NGX_HTTP_GATEWAY_HIT_V_MAX_AGE,
    NGX_HTTP_GATEWAY_HIT_V_INPUTS,
    NGX_HTTP_GATEWAY_HIT_V_CLIENT_ID,
    NGX_HTTP_GATEWAY_HIT_V_CLIENT_NAME,
    NGX_HTTP_GATEWAY_HIT_V_IS_ADMIN,
    NGX_HTTP_GATEWAY_HIT_V_METHOD,
    NGX_HTTP_GATEWAY_HIT_V_COUNT
};


/* A request counted in a rate limit's window, and what its answer's headers
 * will say. */
typedef struct {
    u_char                     key[NGX_HTTP_GATEWAY_HIT_WINDOW_KEY_LEN];
    size_t                     key_len;
    long                       requests;
    long                       per;
    long                       remaining;
    long                       reset;
} ngx_http_gateway_hit_admission_t;


/* The functions the Lua code calls through LuaJIT's ffi, declared by the names
 * common/contract.ts gives them (gateway_contract.h) and defined under their
 * plain names: the files that define them make a definition without a
 * prototype an error, so a plain name the contract does not give fails the
 * build. */
int GW_NOBODY_TELLER(ngx_http_request_t *r);
int GW_HMAC_KEY_SETTER(const u_char *key, size_t len,
    unsigned int lua_version);


/* ngx_http_gateway_hit_module.c: the request's variables. */
ngx_http_variable_value_t *ngx_http_gateway_hit_variable(ngx_http_request_t *r,
    ngx_uint_t which);

/* ngx_http_gateway_hit_request_check.c: the header screens
 * (lua/gateway/request_check.lua). */
ngx_flag_t ngx_http_gateway_hit_clean_headers(ngx_http_request_t *r);

/* ngx_http_gateway_hit_key_records.c: learnt key records
 * (lua/gateway/key_records.lua). */
ngx_flag_t ngx_http_gateway_hit_key_record(ngx_str_t *id, u_char *secret,
    ngx_int_t max_age_ms, u_char *buf,
    ngx_http_gateway_hit_identity_t *identity);

/* ngx_http_gateway_hit_key_table.c: the key table's replica
 * (lua/gateway/key_table.lua) and the sweep that copies it. */
ngx_flag_t ngx_http_gateway_hit_key_table_trusted(void);
ngx_flag_t ngx_http_gateway_hit_key_table(ngx_str_t *id, u_char *secret,
    u_char *buf, ngx_http_gateway_hit_identity_t *identity,
    ngx_flag_t *nobody);
void ngx_http_gateway_hit_sweep_start(ngx_cycle_t *cycle);

/* ngx_http_gateway_hit_cache.c: the decision cache and the revocation markers
 * (lua/gateway/cache.lua). */
ngx_flag_t ngx_http_gateway_hit_cached(ngx_http_request_t *r,
    ngx_str_t *credential, u_char *buf,
    ngx_http_gateway_hit_identity_t *identity);
ngx_flag_t ngx_http_gateway_hit_alive(u_char *row, size_t len, double created);

/* ngx_http_gateway_hit_decision_key.c: the hashes
 * (lua/gateway/decision_key.lua, sha256.lua). */
extern unsigned int  ngx_http_gateway_hit_lua_version;
extern ngx_flag_t    ngx_http_gateway_hit_hmac_ready;

void ngx_http_gateway_hit_digest(u_char *secret, u_char *digest);
void ngx_http_gateway_hit_decision_key(ngx_str_t *credential,
    ngx_http_variable_value_t *inputs, u_char *key);

/* ngx_http_gateway_hit_limit.c: rate limits (lua/gateway/ratelimit.lua). */
ngx_flag_t ngx_http_gateway_hit_admit(ngx_http_gateway_hit_identity_t *identity,
    ngx_http_gateway_hit_admission_t *a);
ngx_flag_t ngx_http_gateway_hit_announce(ngx_http_request_t *r,
    ngx_http_gateway_hit_admission_t *a);
void ngx_http_gateway_hit_take_back(u_char *key, size_t len);

/* ngx_http_gateway_hit_shdict.c: the shared dicts, through lua-nginx-module
 * (resty.core's shdict.lua): found in each worker (lua-nginx-module looks in
 * ngx_cycle, the new cycle only by then); the key table's replica is NULL when
 * default.conf has none. */
extern ngx_shm_zone_t  *ngx_http_gateway_hit_keys;
extern ngx_shm_zone_t  *ngx_http_gateway_hit_revocations;
extern ngx_shm_zone_t  *ngx_http_gateway_hit_limits;
extern ngx_shm_zone_t  *ngx_http_gateway_hit_metrics;
extern ngx_shm_zone_t  *ngx_http_gateway_hit_decisions;
extern ngx_shm_zone_t  *ngx_http_gateway_hit_key_table_zone;

void ngx_http_gateway_hit_find_zones(void);
ngx_int_t ngx_http_gateway_hit_read_number(ngx_shm_zone_t *zone,
    const u_char *key, size_t len, double *n);
size_t ngx_http_gateway_hit_read_string(ngx_shm_zone_t *zone, u_char *key,
    size_t key_len, u_char *buf);
double ngx_http_gateway_hit_add(ngx_shm_zone_t *zone, u_char *key, size_t len,
    double by, long ttl_ms);
void ngx_http_gateway_hit_counter_add(const char *name, double by);
ngx_int_t ngx_http_gateway_hit_decrement(ngx_shm_zone_t *zone, u_char *key,
    size_t len);


/* ngx.now(): the cached time of this event loop turn, to the millisecond. */
static ngx_inline double
ngx_http_gateway_hit_now(void)
{
    ngx_time_t  *tp;

    tp = ngx_timeofday();

    return tp->sec + tp->msec / 1000.0;
}

#endif
