/*
 * This worker's request counts per client (ngx_http_gateway_hit_usage.h): an
 * open-addressing table of row → count in the worker's own memory, so a hit
 * costs a probe of a table of the clients seen this second instead of a
 * look-up, and often an insertion, in the limits dict's tree of every client
 * counted in the last generations: with 10⁵ clients, that tree walk was 6 % of
 * the workers' time (docs/decisions/20261128-usage-batches.md). Pure C: no
 * nginx types.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ngx_http_gateway_hit_ids.h"
#include "ngx_http_gateway_hit_usage.h"

/* The taker's name is the contract's (ngx_http_gateway_hit_usage.h declares it
 * by the contract's GW_USAGE_TAKER): a definition without a prototype is an
 * error. */
#pragma GCC diagnostic error "-Wmissing-prototypes"

/* A worker passes at most some tens of thousands of requests a second, so this
 * many distinct clients between two takes is far above anything real; past it,
 * the caller counts in the dict. */
#define NGX_HTTP_GATEWAY_HIT_USAGE_MAX_SLOTS  (1u << 20)
#define NGX_HTTP_GATEWAY_HIT_USAGE_MIN_SLOTS  1024u

typedef struct {
    uint64_t                       row;      /* 0: empty (rows start at 1) */
    uint64_t                       count;
} ngx_http_gateway_hit_usage_slot_t;

static int ngx_http_gateway_hit_usage_grow(void);
static ngx_http_gateway_hit_usage_slot_t *ngx_http_gateway_hit_usage_find(
    ngx_http_gateway_hit_usage_slot_t *slots, size_t n, uint64_t row);

static ngx_http_gateway_hit_usage_slot_t  *ngx_http_gateway_hit_usage_slots;
/* slots */
static size_t  ngx_http_gateway_hit_usage_size;
static size_t  ngx_http_gateway_hit_usage_used;
/* Where the last take stopped, when its buffer was full. */
static size_t  ngx_http_gateway_hit_usage_cursor;


int
ngx_http_gateway_hit_usage_count(const u_char *row, size_t len)
{
    uint64_t                            id;
    ngx_http_gateway_hit_usage_slot_t  *slot;

    id = ngx_http_gateway_hit_id_number(row, len);
    if (id == 0) {
        return -1;
    }

    /* At most half full, so a probe always ends at an empty slot. */
    if (2 * (ngx_http_gateway_hit_usage_used + 1)
            > ngx_http_gateway_hit_usage_size
        && ngx_http_gateway_hit_usage_grow() != 0)
    {
        return -1;
    }

    slot = ngx_http_gateway_hit_usage_find(ngx_http_gateway_hit_usage_slots,
                                           ngx_http_gateway_hit_usage_size, id);
    if (slot->row == 0) {
        slot->row = id;
        ngx_http_gateway_hit_usage_used++;
    }
    slot->count++;
    return 0;
}


size_t
ngx_http_gateway_hit_usage_take(u_char *buf, size_t size)
{
    int                                 n;
    size_t                              written, i;
    ngx_http_gateway_hit_usage_slot_t  *slot;

    if (ngx_http_gateway_hit_usage_used == 0) {
        return 0;
    }

    written = 0;
    for (i = ngx_http_gateway_hit_usage_cursor;
         i < ngx_http_gateway_hit_usage_size;
         i++)
    {
        slot = &ngx_http_gateway_hit_usage_slots[i];
        if (slot->row == 0) {
            continue;
        }
        /* 15 digits, a space, at most 20 digits and a newline: 37 bytes and the
         * NUL. */
        if (size - written < 40) {
            ngx_http_gateway_hit_usage_cursor = i;
            return written;
        }
        n = snprintf((char *) buf + written, size - written, "%llu %llu\n",
                     (unsigned long long) slot->row,
                     (unsigned long long) slot->count);
        written += n;
    }

    /* Everything was written: empty the table for the next second. */
    memset(ngx_http_gateway_hit_usage_slots, 0,
           ngx_http_gateway_hit_usage_size
           * sizeof(ngx_http_gateway_hit_usage_slot_t));
    ngx_http_gateway_hit_usage_used = 0;
    ngx_http_gateway_hit_usage_cursor = 0;
    return written;
}


void
ngx_http_gateway_hit_usage_release(void)
{
    free(ngx_http_gateway_hit_usage_slots);
    ngx_http_gateway_hit_usage_slots = NULL;
    ngx_http_gateway_hit_usage_size = 0;
    ngx_http_gateway_hit_usage_used = 0;
    ngx_http_gateway_hit_usage_cursor = 0;
}


static int
ngx_http_gateway_hit_usage_grow(void)
{
    size_t                              n, i;
    ngx_http_gateway_hit_usage_slot_t  *slots, *from, *to;

    n = ngx_http_gateway_hit_usage_size == 0
        ? NGX_HTTP_GATEWAY_HIT_USAGE_MIN_SLOTS
        : 2 * ngx_http_gateway_hit_usage_size;
    /* A take that stopped part way holds a cursor into the old table: wait for
     * it to end. */
    if (n > NGX_HTTP_GATEWAY_HIT_USAGE_MAX_SLOTS
        || ngx_http_gateway_hit_usage_cursor != 0)
    {
        return -1;
    }

    slots = calloc(n, sizeof(ngx_http_gateway_hit_usage_slot_t));
    if (slots == NULL) {
        return -1;
    }

    for (i = 0; i < ngx_http_gateway_hit_usage_size; i++) {
        from = &ngx_http_gateway_hit_usage_slots[i];
        if (from->row != 0) {
            to = ngx_http_gateway_hit_usage_find(slots, n, from->row);
            *to = *from;
        }
    }

    free(ngx_http_gateway_hit_usage_slots);
    ngx_http_gateway_hit_usage_slots = slots;
    ngx_http_gateway_hit_usage_size = n;
    return 0;
}


/* The slot of `row`, or the empty slot where it goes (linear probing; n a power
 * of two). */
static ngx_http_gateway_hit_usage_slot_t *
ngx_http_gateway_hit_usage_find(ngx_http_gateway_hit_usage_slot_t *slots,
    size_t n, uint64_t row)
{
    size_t  i;

    i = ngx_http_gateway_hit_id_slot(row, n);
    while (slots[i].row != 0 && slots[i].row != row) {
        i = (i + 1) & (n - 1);
    }
    return &slots[i];
}
