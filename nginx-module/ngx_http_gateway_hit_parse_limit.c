/*
 * A client's rate limit's text and the keys of its windows in the limits dict
 * (lua/gateway/ratelimit.lua's parse and window_key). Fuzzed as fuzz_limit;
 * ngx_http_gateway_hit_limit.c counts the windows.
 */
#include <string.h>

#include "gateway_contract.h"
#include "ngx_http_gateway_hit_parse.h"


/* A client's rate limit, "<requests> <per_seconds>", as
 * lua/gateway/ratelimit.lua's parse reads it: 1-10 digits, a space, 1-5 digits,
 * neither starting with 0, at most a day. */
int
ngx_http_gateway_hit_parse_limit(u_char *p, size_t len, long *requests,
    long *per)
{
    u_char  *end = p + len;

    if (p == end || *p < '1' || *p > '9') {
        return 0;
    }
    for (*requests = 0; p < end && *p >= '0' && *p <= '9'; p++) {
        if (*requests >= 1000000000L) {
            return 0;  /* an 11th digit */
        }
        *requests = *requests * 10 + (*p - '0');
    }
    if (p == end || *p != ' ') {
        return 0;
    }
    p++;
    if (p == end || *p < '1' || *p > '9') {
        return 0;
    }
    for (*per = 0; p < end && *p >= '0' && *p <= '9'; p++) {
        if (*per >= 10000) {
            return 0;  /* a 6th digit */
        }
        *per = *per * 10 + (*p - '0');
    }
    return p == end && *per <= GW_RATE_LIMIT_MAX_PER;
}


/* A rate limit window's key in the limits dict (lua/gateway/ratelimit.lua's
 * window_key): its length, or 0 when it does not fit in `size` bytes. */
size_t
ngx_http_gateway_hit_window_key(u_char *buf, size_t size, u_char *row,
    size_t row_len, long per, long index)
{
    u_char  digits[2][24];
    size_t  n[2], len, i;
    long    v[2];
    unsigned long  u;
    int     negative;

    v[0] = per;
    v[1] = index;
    for (i = 0; i < 2; i++) {
        negative = v[i] < 0;
        u = negative ? 0UL - (unsigned long) v[i] : (unsigned long) v[i];
        n[i] = sizeof(digits[i]);
        do {
            digits[i][--n[i]] = (u_char) ('0' + u % 10);
            u /= 10;
        } while (u != 0);
        if (negative) {
            digits[i][--n[i]] = '-';
        }
    }
    len = sizeof(GW_RATE_LIMIT_PREFIX) - 1 + row_len
          + 1 + (sizeof(digits[0]) - n[0])
          + 1 + (sizeof(digits[1]) - n[1]);
    if (len > size) {
        return 0;
    }
    len = sizeof(GW_RATE_LIMIT_PREFIX) - 1;
    memcpy(buf, GW_RATE_LIMIT_PREFIX, len);
    memcpy(buf + len, row, row_len);
    len += row_len;
    for (i = 0; i < 2; i++) {
        buf[len++] = ' ';
        memcpy(buf + len, digits[i] + n[i], sizeof(digits[i]) - n[i]);
        len += sizeof(digits[i]) - n[i];
    }
    return len;
}
