/*
 * A key id (a client's row) as the worker's own tables key it: its digits as a
 * number, and where a probe for it starts. Shared by the usage counts
 * (ngx_http_gateway_hit_usage.c) and the record copies
 * (ngx_http_gateway_hit_records.c). Pure C: no nginx types.
 */
#ifndef NGX_HTTP_GATEWAY_HIT_IDS_H
#define NGX_HTTP_GATEWAY_HIT_IDS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* 15 digits: every key id below 10^15, as the API-key parser admits. */
#define NGX_HTTP_GATEWAY_HIT_ID_MAX_DIGITS  15


/* The id's digits as a number; 0 for anything else (no id is 0, none starts
 * with 0). */
static inline uint64_t
ngx_http_gateway_hit_id_number(const u_char *id, size_t len)
{
    size_t    i;
    uint64_t  n;

    if (len == 0 || len > NGX_HTTP_GATEWAY_HIT_ID_MAX_DIGITS || id[0] == '0') {
        return 0;
    }

    n = 0;
    for (i = 0; i < len; i++) {
        if (id[i] < '0' || id[i] > '9') {
            return 0;
        }
        n = n * 10 + (id[i] - '0');
    }
    return n;
}


/* The slot a linear probe for `id` starts at in a table of `n` slots (a power
 * of two, at most 2^24). Fibonacci hashing: consecutive ids (how they are made)
 * spread over the table. */
static inline size_t
ngx_http_gateway_hit_id_slot(uint64_t id, size_t n)
{
    return (size_t) ((id * 0x9E3779B97F4A7C15ull) >> 40) & (n - 1);
}

#endif
