/*
 * An API key against its learnt key record in the keys dict
 * (lua/gateway/key_records.lua's verdict "pass"), when there is no trusted key
 * table:
 * the record's bytes are judged by ngx_http_gateway_hit_parse_key_record
 * (ngx_http_gateway_hit_parse_records.c), the revocation markers read here.
 */
#include "ngx_http_gateway_hit_module.h"


/* 1 with the key's client in `identity` (pointing into `buf`, RECORD_BUFFER
 * bytes) when its record passes it and no revocation came since it was learnt;
 * 0: Lua's. */
ngx_flag_t
ngx_http_gateway_hit_key_record(ngx_str_t *id, u_char *secret,
    ngx_int_t max_age_ms, u_char *buf,
    ngx_http_gateway_hit_identity_t *identity)
{
    u_char                          digest[NGX_HTTP_GATEWAY_HIT_DIGEST_LEN];
    size_t                          len;
    double                          now;
    ngx_http_gateway_hit_str_t      key_id;
    ngx_http_gateway_hit_learnt_t   learnt;

    if (ngx_http_gateway_hit_keys == NULL) {
        return 0;
    }

    len = ngx_http_gateway_hit_read_string(ngx_http_gateway_hit_keys, id->data,
                                           id->len, buf);
    if (len == 0) {
        return 0;
    }

    ngx_http_gateway_hit_digest(secret, digest);
    key_id.data = id->data;
    key_id.len = id->len;
    now = ngx_http_gateway_hit_now();

    if (!ngx_http_gateway_hit_parse_key_record(buf, len, &key_id, digest, now,
                                               max_age_ms, &learnt))
    {
        return 0;
    }

    if (!ngx_http_gateway_hit_alive(id->data, id->len, learnt.created)) {
        return 0;  /* revoked since it was learnt */
    }

    *identity = learnt.identity;
    return 1;
}
