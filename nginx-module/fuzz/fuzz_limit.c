/*
 * libFuzzer target: a client's rate limit (ngx_http_gateway_hit_parse_limit, as
 * lua/gateway/ratelimit.lua's parse reads it: ^[1-9]%d{0,9} [1-9]%d{0,4}$, at
 * most a day) and the window key built from it
 * (ngx_http_gateway_hit_window_key, against snprintf). The input: 8 bytes of a
 * window index, then the limit's text; the row is the limit's text too.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gateway_contract.h"
#include "ngx_http_gateway_hit_parse.h"

static int
lua_parses(const unsigned char *p, size_t n, long *requests, long *per)
{
    size_t  i = 0, start;

    if (i == n || p[i] < '1' || p[i] > '9') {
        return 0;
    }
    for (*requests = 0, start = i; i < n && p[i] >= '0' && p[i] <= '9'; i++) {
        *requests = *requests * 10 + (p[i] - '0');
        if (i - start >= 10) {
            return 0;
        }
    }
    if (i == n || p[i] != ' ') {
        return 0;
    }
    i++;
    if (i == n || p[i] < '1' || p[i] > '9') {
        return 0;
    }
    for (*per = 0, start = i; i < n && p[i] >= '0' && p[i] <= '9'; i++) {
        *per = *per * 10 + (p[i] - '0');
        if (i - start >= 5) {
            return 0;
        }
    }
    return i == n && *per <= GW_RATE_LIMIT_MAX_PER;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    unsigned char  *copy, key[NGX_HTTP_GATEWAY_HIT_WINDOW_KEY_LEN];
    char            expected[512];
    long            requests = 0, per = 0, lua_requests = 0, lua_per = 0, index = 0;
    size_t          len, row_len;
    int             c, lua, n;

    if (size < sizeof(index)) {
        return 0;
    }
    memcpy(&index, data, sizeof(index));
    data += sizeof(index);
    size -= sizeof(index);
    copy = malloc(size ? size : 1);
    memcpy(copy, data, size);

    c = ngx_http_gateway_hit_parse_limit(copy, size, &requests, &per);
    lua = lua_parses(copy, size, &lua_requests, &lua_per);
    if (c != lua || (c && (requests != lua_requests || per != lua_per))) {
        abort();
    }

    row_len = size;
    len = ngx_http_gateway_hit_window_key(key, sizeof(key), copy, row_len, per, index);
    n = snprintf(expected, sizeof(expected), GW_RATE_LIMIT_PREFIX "%.*s %ld %ld", (int) row_len,
                 (const char *) copy, per, index);
    if (n < 0) {
        abort();
    }
    if ((size_t) n > sizeof(key) ? len != 0
        : (len != (size_t) n || memcmp(key, expected, len) != 0))
    {
        /* snprintf's %.*s stops at a NUL: compare only rows without one */
        if (memchr(copy, 0, row_len) == NULL) {
            abort();
        }
    }
    free(copy);
    return 0;
}
