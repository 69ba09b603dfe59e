/*
 * libFuzzer target: the API key parser (ngx_http_gateway_hit_parse_api_key)
 * against the Lua code's own definition of the issued shape
 * (lua/gateway/credentials.lua's parse_api_key, ^[Aa][Pp][Kk]
 * +([1-9][0-9]{0,14})\.([A-Za-z0-9_-]{43})\z), matched here another way: the
 * module may pass only what Lua would parse, and must find the same id and
 * secret.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ngx_http_gateway_hit_parse.h"

static int
is_secret_char(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
           || c == '-' || c == '_';
}

/* The pattern, from the end: 43 secret characters, a dot, 1-15 digits not
 * starting with 0, at least one space, "apk" in any case, and nothing before.
 */
static int
lua_parses(const unsigned char *p, size_t n, size_t *id_at, size_t *id_len)
{
    size_t  i, dot, start;

    if (n < 43 + 1 + 1 + 1 + 3) {
        return 0;
    }
    for (i = n - 43; i < n; i++) {
        if (!is_secret_char(p[i])) {
            return 0;
        }
    }
    dot = n - 44;
    if (p[dot] != '.') {
        return 0;
    }
    for (start = dot; start > 0 && p[start - 1] >= '0' && p[start - 1] <= '9'; start--) {
        /* void */
    }
    if (start == dot || dot - start > 15 || p[start] == '0') {
        return 0;
    }
    for (i = start; i > 0 && p[i - 1] == ' '; i--) { /* void */ }
    if (i == start || i != 3) {
        return 0;
    }
    if ((p[0] != 'a' && p[0] != 'A') || (p[1] != 'p' && p[1] != 'P')
        || (p[2] != 'k' && p[2] != 'K'))
    {
        return 0;
    }
    *id_at = start;
    *id_len = dot - start;
    return 1;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    unsigned char               *copy = malloc(size ? size : 1);
    unsigned char               *secret = NULL;
    ngx_http_gateway_hit_str_t   id = { 0, NULL };
    size_t                       id_at = 0, id_len = 0;
    int                          c, lua;

    memcpy(copy, data, size);
    c = ngx_http_gateway_hit_parse_api_key(copy, size, &id, &secret);
    lua = lua_parses(copy, size, &id_at, &id_len);
    if (c != lua) {
        abort();
    }
    if (c && (id.data != copy + id_at || id.len != id_len || secret != copy + size - 43)) {
        abort();
    }
    free(copy);
    return 0;
}
