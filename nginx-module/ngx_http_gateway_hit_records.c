/*
 * This worker's copies of key records (ngx_http_gateway_hit_records.h): one arena of record
 * bytes, appended to and emptied at once (a change drops every copy, so nothing is ever freed
 * alone), and an open-addressing index of key id → place in the arena.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ngx_http_gateway_hit_ids.h"
#include "ngx_http_gateway_hit_records.h"

#define NGX_HTTP_GATEWAY_HIT_RECORDS_MIN_SLOTS   4096u
#define NGX_HTTP_GATEWAY_HIT_RECORDS_MAX_SLOTS   (1u << 21)
#define NGX_HTTP_GATEWAY_HIT_RECORDS_MIN_ARENA   (256u << 10)

typedef struct {
    uint64_t                       id;       /* 0: empty (ids start at 1) */
    uint32_t                       offset;
    uint32_t                       len;
} ngx_http_gateway_hit_records_slot_t;

static ngx_http_gateway_hit_records_slot_t *ngx_http_gateway_hit_records_slot(
    ngx_http_gateway_hit_records_slot_t *slots, size_t n, uint64_t id);
static int ngx_http_gateway_hit_records_grow_index(void);
static int ngx_http_gateway_hit_records_grow_arena(size_t need);

static ngx_http_gateway_hit_records_slot_t  *ngx_http_gateway_hit_records_slots;
static size_t                                ngx_http_gateway_hit_records_nslots;
static size_t                                ngx_http_gateway_hit_records_used;
static u_char                               *ngx_http_gateway_hit_records_arena;
static size_t                                ngx_http_gateway_hit_records_arena_size;
static size_t                                ngx_http_gateway_hit_records_arena_used;
static double                                ngx_http_gateway_hit_records_version;
static int                                   ngx_http_gateway_hit_records_have_version;


int
ngx_http_gateway_hit_records_find(const u_char *id, size_t id_len, double version,
    const u_char **rec, size_t *len)
{
    uint64_t                              key;
    ngx_http_gateway_hit_records_slot_t  *slot;

    if (!ngx_http_gateway_hit_records_have_version
        || version != ngx_http_gateway_hit_records_version)
    {
        ngx_http_gateway_hit_records_forget();
        ngx_http_gateway_hit_records_version = version;
        ngx_http_gateway_hit_records_have_version = 1;
        return 0;
    }

    key = ngx_http_gateway_hit_id_number(id, id_len);
    if (key == 0 || ngx_http_gateway_hit_records_used == 0) {
        return 0;
    }

    slot = ngx_http_gateway_hit_records_slot(ngx_http_gateway_hit_records_slots,
                                             ngx_http_gateway_hit_records_nslots, key);
    if (slot->id == 0) {
        return 0;
    }

    *rec = ngx_http_gateway_hit_records_arena + slot->offset;
    *len = slot->len;
    return 1;
}


void
ngx_http_gateway_hit_records_keep(const u_char *id, size_t id_len, double version,
    const u_char *rec, size_t len)
{
    uint64_t                              key;
    ngx_http_gateway_hit_records_slot_t  *slot;

    if (!ngx_http_gateway_hit_records_have_version
        || version != ngx_http_gateway_hit_records_version)
    {
        return;  /* made at another version than the copies: not one of them */
    }

    /* An empty record is no record (an absent one reads as 0 bytes); and with nothing kept yet
     * the arena is NULL, where even adding 0 is undefined (found by fuzz_worker_tables). */
    key = ngx_http_gateway_hit_id_number(id, id_len);
    if (key == 0 || len == 0) {
        return;
    }

    /* At most half full, so a probe always ends at an empty slot. */
    if (2 * (ngx_http_gateway_hit_records_used + 1) > ngx_http_gateway_hit_records_nslots
        && ngx_http_gateway_hit_records_grow_index() != 0)
    {
        return;
    }

    if (len > ngx_http_gateway_hit_records_arena_size - ngx_http_gateway_hit_records_arena_used
        && ngx_http_gateway_hit_records_grow_arena(len) != 0)
    {
        return;
    }

    slot = ngx_http_gateway_hit_records_slot(ngx_http_gateway_hit_records_slots,
                                             ngx_http_gateway_hit_records_nslots, key);
    if (slot->id != 0) {
        return;  /* kept already */
    }

    memcpy(ngx_http_gateway_hit_records_arena + ngx_http_gateway_hit_records_arena_used, rec,
           len);
    slot->id = key;
    slot->offset = (uint32_t) ngx_http_gateway_hit_records_arena_used;
    slot->len = (uint32_t) len;
    ngx_http_gateway_hit_records_arena_used += len;
    ngx_http_gateway_hit_records_used++;
}


void
ngx_http_gateway_hit_records_forget(void)
{
    if (ngx_http_gateway_hit_records_used != 0) {
        memset(ngx_http_gateway_hit_records_slots, 0,
               ngx_http_gateway_hit_records_nslots
               * sizeof(ngx_http_gateway_hit_records_slot_t));
    }
    ngx_http_gateway_hit_records_used = 0;
    ngx_http_gateway_hit_records_arena_used = 0;
    ngx_http_gateway_hit_records_have_version = 0;
}


void
ngx_http_gateway_hit_records_release(void)
{
    ngx_http_gateway_hit_records_forget();
    free(ngx_http_gateway_hit_records_slots);
    free(ngx_http_gateway_hit_records_arena);
    ngx_http_gateway_hit_records_slots = NULL;
    ngx_http_gateway_hit_records_nslots = 0;
    ngx_http_gateway_hit_records_arena = NULL;
    ngx_http_gateway_hit_records_arena_size = 0;
}


/* The slot of `id`, or the empty slot where it goes (linear probing; n a power of two). */
static ngx_http_gateway_hit_records_slot_t *
ngx_http_gateway_hit_records_slot(ngx_http_gateway_hit_records_slot_t *slots, size_t n,
    uint64_t id)
{
    size_t  i;

    i = ngx_http_gateway_hit_id_slot(id, n);
    while (slots[i].id != 0 && slots[i].id != id) {
        i = (i + 1) & (n - 1);
    }
    return &slots[i];
}


static int
ngx_http_gateway_hit_records_grow_index(void)
{
    size_t                                n, i;
    ngx_http_gateway_hit_records_slot_t  *slots, *from;

    n = ngx_http_gateway_hit_records_nslots == 0 ? NGX_HTTP_GATEWAY_HIT_RECORDS_MIN_SLOTS
                                                 : 2 * ngx_http_gateway_hit_records_nslots;
    if (n > NGX_HTTP_GATEWAY_HIT_RECORDS_MAX_SLOTS) {
        return -1;
    }

    slots = calloc(n, sizeof(ngx_http_gateway_hit_records_slot_t));
    if (slots == NULL) {
        return -1;
    }

    for (i = 0; i < ngx_http_gateway_hit_records_nslots; i++) {
        from = &ngx_http_gateway_hit_records_slots[i];
        if (from->id != 0) {
            *ngx_http_gateway_hit_records_slot(slots, n, from->id) = *from;
        }
    }

    free(ngx_http_gateway_hit_records_slots);
    ngx_http_gateway_hit_records_slots = slots;
    ngx_http_gateway_hit_records_nslots = n;
    return 0;
}


static int
ngx_http_gateway_hit_records_grow_arena(size_t need)
{
    size_t   size;
    u_char  *arena;

    size = ngx_http_gateway_hit_records_arena_size == 0
           ? NGX_HTTP_GATEWAY_HIT_RECORDS_MIN_ARENA
           : 2 * ngx_http_gateway_hit_records_arena_size;
    while (size - ngx_http_gateway_hit_records_arena_used < need) {
        size *= 2;
    }
    if (size > NGX_HTTP_GATEWAY_HIT_RECORDS_MAX_BYTES) {
        return -1;
    }

    arena = realloc(ngx_http_gateway_hit_records_arena, size);
    if (arena == NULL) {
        return -1;
    }

    ngx_http_gateway_hit_records_arena = arena;
    ngx_http_gateway_hit_records_arena_size = size;
    return 0;
}
