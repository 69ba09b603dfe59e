/*
 * A client's rate limit (lua/gateway/ratelimit.lua): a request the module would
 * pass counted in the sliding window it falls in, in the limits dict, and the
 * RateLimit headers of its answer. The limit's text and the windows' keys are
 * ngx_http_gateway_hit_parse_limit.c's.
 */
#include <math.h>

#include "ngx_http_gateway_hit_module.h"


static ngx_table_elt_t *ngx_http_gateway_hit_add_header(ngx_http_request_t *r,
    const char *name, u_char *value, size_t len);
static ngx_flag_t ngx_http_gateway_hit_store_closed(void);


/* lua/gateway/ratelimit.lua's admit, for a request the module would pass: 1
 * when it fits in the sliding window (counted); 0 when it does not, while the
 * rate limit store is closed, or when anything cannot be told (then it is not
 * counted, and the Lua code decides: it counts it itself, or answers 429 or
 * 503). */
ngx_flag_t
ngx_http_gateway_hit_admit(ngx_http_gateway_hit_identity_t *identity,
    ngx_http_gateway_hit_admission_t *a)
{
    u_char                       key[NGX_HTTP_GATEWAY_HIT_WINDOW_KEY_LEN];
    size_t                       key_len;
    long                         index;
    double                       now, elapsed, current, previous = 0, estimate;
    ngx_int_t                    rc;
    ngx_http_gateway_hit_str_t  *row;

    row = &identity->row;

    if (!ngx_http_gateway_hit_parse_limit(identity->limit.data,
                                          identity->limit.len, &a->requests,
                                          &a->per))
    {
        return 0;
    }

    if (ngx_http_gateway_hit_store_closed()) {
        return 0;
    }

    now = ngx_http_gateway_hit_now();
    index = (long) floor(now / a->per);
    elapsed = now - (double) index * a->per;
    a->key_len = ngx_http_gateway_hit_window_key(a->key, sizeof(a->key),
                                                 row->data, row->len, a->per,
                                                 index);
    key_len = ngx_http_gateway_hit_window_key(key, sizeof(key), row->data,
                                              row->len, a->per, index - 1);
    if (a->key_len == 0 || key_len == 0) {
        return 0;
    }

    /* Windows live two periods: the next one still weighs this one. */
    current = ngx_http_gateway_hit_add(ngx_http_gateway_hit_limits, a->key,
                                       a->key_len, 1, 2000L * a->per);
    if (current < 0) {
        return 0;
    }

    rc = ngx_http_gateway_hit_read_number(ngx_http_gateway_hit_limits, key,
                                          key_len, &previous);
    if (rc == NGX_ERROR) {
        ngx_http_gateway_hit_take_back(a->key, a->key_len);
        return 0;
    }
    if (rc == NGX_DECLINED) {
        previous = 0;
    }

    estimate = previous * (1 - elapsed / a->per) + current;
    if (estimate > a->requests) {
        /* not counted: Lua counts it again, or refuses it */
        ngx_http_gateway_hit_take_back(a->key, a->key_len);
        return 0;
    }

    a->remaining = (long) floor(a->requests - estimate);
    a->reset = (long) ceil(a->per - elapsed);
    if (a->reset < 1) {
        a->reset = 1;
    }
    return 1;
}


/* Whether the rate limit store's flag (RATE_LIMIT_STORE in common/contract/,
 * set by the sidecar while it cannot sync with Redis) is there, as
 * ratelimit.lua reads it: any value closes, and so does a flag that cannot be
 * read; only its absence lets the window decide. */
static ngx_flag_t
ngx_http_gateway_hit_store_closed(void)
{
    double         value;
    static u_char  key[] = GW_RATE_LIMIT_STORE_CLOSED;

    if (ngx_http_gateway_hit_limits == NULL) {
        return 1;
    }

    return ngx_http_gateway_hit_read_number(ngx_http_gateway_hit_limits, key,
                                            sizeof(key) - 1, &value)
           != NGX_DECLINED;
}


/* The RateLimit-Policy and RateLimit headers of an admitted request
 * (lua/gateway/ratelimit.lua sets the same). */
ngx_flag_t
ngx_http_gateway_hit_announce(ngx_http_request_t *r,
    ngx_http_gateway_hit_admission_t *a)
{
    u_char            value[128], *last;
    ngx_table_elt_t  *policy;

    last = ngx_snprintf(value, sizeof(value),
                        "\"" GW_RATE_LIMIT_POLICY_NAME "\";q=%l;w=%l",
                        a->requests, a->per);
    policy = ngx_http_gateway_hit_add_header(r, GW_RATE_LIMIT_POLICY_HEADER,
                                             value, last - value);
    if (policy == NULL) {
        return 0;
    }

    last = ngx_snprintf(value, sizeof(value),
                        "\"" GW_RATE_LIMIT_POLICY_NAME "\";r=%l;t=%l",
                        a->remaining, a->reset);
    if (ngx_http_gateway_hit_add_header(r, GW_RATE_LIMIT_STATE_HEADER, value,
                                        last - value)
        == NULL)
    {
        policy->hash = 0;
        return 0;
    }
    return 1;
}


/* A response header, as the Lua code's ngx.header sets one in the access phase;
 * NULL when there is no memory for it. */
static ngx_table_elt_t *
ngx_http_gateway_hit_add_header(ngx_http_request_t *r, const char *name,
    u_char *value, size_t len)
{
    ngx_table_elt_t  *h;

    h = ngx_list_push(&r->headers_out.headers);
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


/* A request taken back out of a rate limit's window it was counted in (it goes
 * to Lua, which counts it itself). Only ever from a count that is there: a
 * window evicted in between is not made again, at -1 and without an expiry,
 * where it would give the client a request more in a window that never ends. */
void
ngx_http_gateway_hit_take_back(u_char *key, size_t len)
{
    if (ngx_http_gateway_hit_limits != NULL) {
        (void) ngx_http_gateway_hit_decrement(ngx_http_gateway_hit_limits, key,
                                              len);
    }
}
