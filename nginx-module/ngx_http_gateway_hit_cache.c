/*
 * The decision cache (lua/gateway/cache.lua): a credential that is not an API
 * key, found by its keyed hash (ngx_http_gateway_hit_decision_key.c) in the
 * decisions dict, its entry judged by ngx_http_gateway_hit_parse_decision; and
 * the revocation markers anything learnt is checked against (cache.lua's
 * alive).
 */
#include "ngx_http_gateway_hit_module.h"


static double ngx_http_gateway_hit_marker(const u_char *key, size_t len);


/* Any other credential against the decision cache (lua/gateway/cache.lua's
 * get): 1 with its client in `identity` (pointing into `buf`, RECORD_BUFFER
 * bytes); 0: Lua's. */
ngx_flag_t
ngx_http_gateway_hit_cached(ngx_http_request_t *r, ngx_str_t *credential,
    u_char *buf, ngx_http_gateway_hit_identity_t *identity)
{
    u_char                          key[1 + NGX_HTTP_GATEWAY_HIT_DIGEST_LEN];
    size_t                          len;
    ngx_http_variable_value_t      *inputs;
    ngx_http_gateway_hit_learnt_t   learnt;

    if (!ngx_http_gateway_hit_hmac_ready
        || ngx_http_gateway_hit_decisions == NULL)
    {
        return 0;
    }

    inputs = ngx_http_gateway_hit_variable(r, NGX_HTTP_GATEWAY_HIT_V_INPUTS);
    if (inputs == NULL) {
        return 0;
    }

    ngx_http_gateway_hit_decision_key(credential, inputs, key);

    len = ngx_http_gateway_hit_read_string(ngx_http_gateway_hit_decisions, key,
                                           sizeof(key), buf);
    if (!ngx_http_gateway_hit_parse_decision(buf, len, &learnt)
        || !ngx_http_gateway_hit_alive(learnt.identity.row.data,
                                       learnt.identity.row.len, learnt.created))
    {
        return 0;
    }

    *identity = learnt.identity;
    return 1;
}


/* Whether something learnt about client `row` at `created` still holds
 * (lua/gateway/cache.lua's alive): no revocation of that client, or of
 * everything, at or after that moment. */
ngx_flag_t
ngx_http_gateway_hit_alive(u_char *row, size_t len, double created)
{
    return ngx_http_gateway_hit_marker(row, len) < created
           && ngx_http_gateway_hit_marker((u_char *) "*", 1) < created;
}


/* A revocation marker (Unix time, s), or -1 when there is none. */
static double
ngx_http_gateway_hit_marker(const u_char *key, size_t len)
{
    double  n = 0;

    switch (ngx_http_gateway_hit_read_number(ngx_http_gateway_hit_revocations,
                                             key, len, &n))
    {
    case NGX_OK:
        return n;
    case NGX_DECLINED:
        return -1;
    default:
        /* cannot tell, or not a marker Lua wrote: as if revoked, Lua decides */
        return 1e300;
    }
}
