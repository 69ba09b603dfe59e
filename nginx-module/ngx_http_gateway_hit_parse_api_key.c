/*
 * An API key's shape, `apk <id>.<secret>`, as it is issued
 * (lua/gateway/access.lua's parse_api_key, common/ on the TypeScript side).
 * Fuzzed as fuzz_api_key.
 */
#include "ngx_http_gateway_hit_ids.h"
#include "ngx_http_gateway_hit_parse.h"


/* `apk <id>.<secret>` in the only shape a key is issued in
 * (lua/gateway/access.lua's parse_api_key): "apk" in any case, spaces, an id of
 * 1-15 digits not starting with 0, a dot, 43 base64url characters, nothing
 * after. */
int
ngx_http_gateway_hit_parse_api_key(u_char *p, size_t len,
    ngx_http_gateway_hit_str_t *id, u_char **secret)
{
    u_char  *end = p + len;

    if (len < 4 || (p[0] | 0x20) != 'a' || (p[1] | 0x20) != 'p'
        || (p[2] | 0x20) != 'k' || p[3] != ' ')
    {
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
    if (id->len > NGX_HTTP_GATEWAY_HIT_ID_MAX_DIGITS || p >= end || *p != '.') {
        return 0;
    }
    *secret = ++p;
    if (end - p != NGX_HTTP_GATEWAY_HIT_SECRET_LEN) {
        return 0;
    }
    for ( /* void */ ; p < end; p++) {
        if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z')
              || (*p >= 'A' && *p <= 'Z') || *p == '-' || *p == '_'))
        {
            return 0;
        }
    }
    return 1;
}
