/*
 * This worker's copies of key records (ngx_http_gateway_hit_records.h): one
 * arena of record bytes, appended to, and an open-addressing index of key id →
 * place in the arena. A copy dropped alone (a change) leaves its bytes behind;
 * when they are a quarter of the arena and it is full, every copy goes and the
 * sweep copies them again.
 *
 * A slot is 16 bytes: the id (8), the record's offset in the arena (4) and its
 * length (4). The arena is never larger than
 * NGX_HTTP_GATEWAY_HIT_RECORDS_ARENA_CAP (4 GiB - 1), so the end of every
 * record in it, and so its offset and length, fits the slot's 32 bits
 * (docs/decisions/20261202-arena-offsets.md): the limit is cut to it, the
 * growth never plans past it, and a record is placed only when its end is
 * within it.
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
    /* offset + len <= ARENA_CAP = UINT32_MAX */
    uint32_t                       offset;
    uint32_t                       len;
} ngx_http_gateway_hit_records_slot_t;

static ngx_http_gateway_hit_records_slot_t *ngx_http_gateway_hit_records_slot(
    ngx_http_gateway_hit_records_slot_t *slots, size_t n, uint64_t id);
static void ngx_http_gateway_hit_records_drop(uint64_t id);
static int ngx_http_gateway_hit_records_grow_index(void);
static int ngx_http_gateway_hit_records_grow_arena(size_t need);

static ngx_http_gateway_hit_records_slot_t  *ngx_http_gateway_hit_records_slots;
static size_t         ngx_http_gateway_hit_records_nslots;
static size_t         ngx_http_gateway_hit_records_used;
static u_char        *ngx_http_gateway_hit_records_arena;
static size_t         ngx_http_gateway_hit_records_arena_size;
static size_t         ngx_http_gateway_hit_records_arena_used;
static size_t         ngx_http_gateway_hit_records_dropped;
static size_t         ngx_http_gateway_hit_records_max_bytes
    = NGX_HTTP_GATEWAY_HIT_RECORDS_MAX_BYTES;
static double         ngx_http_gateway_hit_records_at;
static int            ngx_http_gateway_hit_records_have_version;
static unsigned long  ngx_http_gateway_hit_records_generations;


int
ngx_http_gateway_hit_records_find(const u_char *id, size_t id_len,
    double version, const u_char **rec, size_t *len)
{
    uint64_t                              key;
    ngx_http_gateway_hit_records_slot_t  *slot;

    if (!ngx_http_gateway_hit_records_have_version
        || version != ngx_http_gateway_hit_records_at)
    {
        return 0;
    }

    key = ngx_http_gateway_hit_id_number(id, id_len);
    if (key == 0 || ngx_http_gateway_hit_records_used == 0) {
        return 0;
    }

    slot = ngx_http_gateway_hit_records_slot(
               ngx_http_gateway_hit_records_slots,
               ngx_http_gateway_hit_records_nslots, key);
    if (slot->id == 0) {
        return 0;
    }

    *rec = ngx_http_gateway_hit_records_arena + slot->offset;
    *len = slot->len;
    return 1;
}


int
ngx_http_gateway_hit_records_keep(const u_char *id, size_t id_len,
    double version, const u_char *rec, size_t len)
{
    uint64_t                              key;
    ngx_http_gateway_hit_records_slot_t  *slot;

    if (!ngx_http_gateway_hit_records_have_version
        || version != ngx_http_gateway_hit_records_at)
    {
        return 0;  /* made at another version: not one of the copies */
    }

    /* An empty record is no record (an absent one reads as 0 bytes); and with
     * nothing kept yet the arena is NULL, where even adding 0 is undefined
     * (found by fuzz_worker_tables). */
    key = ngx_http_gateway_hit_id_number(id, id_len);
    if (key == 0 || len == 0) {
        return 0;
    }

    slot = ngx_http_gateway_hit_records_nslots == 0
           ? NULL
           : ngx_http_gateway_hit_records_slot(
                 ngx_http_gateway_hit_records_slots,
                 ngx_http_gateway_hit_records_nslots, key);
    if (slot != NULL && slot->id != 0) {
        return 0;  /* kept already */
    }

    /* At most half full, so a probe always ends at an empty slot. */
    if (2 * (ngx_http_gateway_hit_records_used + 1)
            > ngx_http_gateway_hit_records_nslots
        && ngx_http_gateway_hit_records_grow_index() != 0)
    {
        return -1;
    }

    if (len > ngx_http_gateway_hit_records_arena_size
              - ngx_http_gateway_hit_records_arena_used
        && ngx_http_gateway_hit_records_grow_arena(len) != 0)
    {
        /* Full, a quarter of it the bytes of copies dropped alone: start again
         * (the sweep copies the records anew, without the holes). */
        if (ngx_http_gateway_hit_records_dropped == 0
            || ngx_http_gateway_hit_records_dropped
               < ngx_http_gateway_hit_records_arena_used / 4)
        {
            return -1;
        }
        ngx_http_gateway_hit_records_start(version);
        if (len > ngx_http_gateway_hit_records_arena_size) {
            return -1;
        }
    }

    /* Its end within the cap: the offset and length fit the slot's 32 bits.
     * (The arena is never larger than the cap: this holds whenever the bytes
     * fit, checked all the same.) */
    if (!ngx_http_gateway_hit_records_fits(
             ngx_http_gateway_hit_records_arena_used, len))
    {
        return -1;
    }

    /* Looked up again: growing the index moved every slot, starting over
     * emptied them. */
    slot = ngx_http_gateway_hit_records_slot(
               ngx_http_gateway_hit_records_slots,
               ngx_http_gateway_hit_records_nslots, key);

    memcpy(ngx_http_gateway_hit_records_arena
           + ngx_http_gateway_hit_records_arena_used, rec, len);
    slot->id = key;
    slot->offset = (uint32_t) ngx_http_gateway_hit_records_arena_used;
    slot->len = (uint32_t) len;
    ngx_http_gateway_hit_records_arena_used += len;
    ngx_http_gateway_hit_records_used++;
    return 1;
}


int
ngx_http_gateway_hit_records_version(double *version)
{
    if (!ngx_http_gateway_hit_records_have_version) {
        return 0;
    }
    *version = ngx_http_gateway_hit_records_at;
    return 1;
}


void
ngx_http_gateway_hit_records_start(double version)
{
    ngx_http_gateway_hit_records_forget();
    ngx_http_gateway_hit_records_at = version;
    ngx_http_gateway_hit_records_have_version = 1;
}


int
ngx_http_gateway_hit_records_follow(const u_char *text, size_t len,
    double version)
{
    size_t    i, start;
    uint64_t  tag, key;

    if (!ngx_http_gateway_hit_records_have_version
        || ngx_http_gateway_hit_records_at + 1 != version)
    {
        return 0;
    }

    /* The version the text is for: digits up to the first space, the whole
     * number. */
    tag = 0;
    for (i = 0; i < len && text[i] != ' '; i++) {
        if (text[i] < '0' || text[i] > '9' || i >= 16) {
            return 0;
        }
        tag = tag * 10 + (uint64_t) (text[i] - '0');
    }
    if (i == 0 || (double) tag != version) {
        return 0;
    }

    /* Then " <id>" per id changed; "*" (or anything not an id) is not a list.
     * Ids are dropped as they are read: on a 0 the caller drops the rest too.
     */
    while (i < len) {
        if (text[i] != ' ') {
            return 0;
        }
        start = ++i;
        while (i < len && text[i] != ' ') {
            i++;
        }
        key = ngx_http_gateway_hit_id_number(text + start, i - start);
        if (key == 0) {
            return 0;
        }
        ngx_http_gateway_hit_records_drop(key);
    }

    ngx_http_gateway_hit_records_at = version;
    return 1;
}


unsigned long
ngx_http_gateway_hit_records_generation(void)
{
    return ngx_http_gateway_hit_records_generations;
}


size_t
ngx_http_gateway_hit_records_limit(size_t bytes)
{
    ngx_http_gateway_hit_records_max_bytes =
        bytes < NGX_HTTP_GATEWAY_HIT_RECORDS_ARENA_CAP
        ? bytes : NGX_HTTP_GATEWAY_HIT_RECORDS_ARENA_CAP;
    return ngx_http_gateway_hit_records_max_bytes;
}


int
ngx_http_gateway_hit_records_fits(size_t offset, size_t len)
{
    return offset <= NGX_HTTP_GATEWAY_HIT_RECORDS_ARENA_CAP
           && len <= NGX_HTTP_GATEWAY_HIT_RECORDS_ARENA_CAP - offset;
}


size_t
ngx_http_gateway_hit_records_arena_next(size_t size, size_t used, size_t need,
    size_t max)
{
    size_t  next;

    if (max > NGX_HTTP_GATEWAY_HIT_RECORDS_ARENA_CAP) {
        max = NGX_HTTP_GATEWAY_HIT_RECORDS_ARENA_CAP;
    }

    /* Not even the whole of the limit holds them. */
    if (used > size || used > max || need > max - used) {
        return 0;
    }

    /* Doubled (the first: the smallest arena) until they fit, never past the
     * limit; no sum or product here can wrap. */
    next = size == 0 ? NGX_HTTP_GATEWAY_HIT_RECORDS_MIN_ARENA
                     : (size > max / 2 ? max : 2 * size);
    while (next < max && next - used < need) {
        next = next > max / 2 ? max : 2 * next;
    }
    if (next > max) {
        next = max;  /* a limit below the smallest arena */
    }

    return next > size && next - used >= need ? next : 0;
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
    ngx_http_gateway_hit_records_dropped = 0;
    ngx_http_gateway_hit_records_have_version = 0;
    ngx_http_gateway_hit_records_generations++;
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


/* The slot of `id`, or the empty slot where it goes (linear probing; n a power
 * of two). */
static ngx_http_gateway_hit_records_slot_t *
ngx_http_gateway_hit_records_slot(ngx_http_gateway_hit_records_slot_t *slots,
    size_t n, uint64_t id)
{
    size_t  i;

    i = ngx_http_gateway_hit_id_slot(id, n);
    while (slots[i].id != 0 && slots[i].id != id) {
        i = (i + 1) & (n - 1);
    }
    return &slots[i];
}


/* Drops the copy of `id`, if any: the slots after it in its run move back where
 * a probe for them still finds them (deletion from linear probing without
 * markers). */
static void
ngx_http_gateway_hit_records_drop(uint64_t id)
{
    size_t                                i, j, home, mask;
    ngx_http_gateway_hit_records_slot_t  *slots;

    if (ngx_http_gateway_hit_records_used == 0) {
        return;
    }

    slots = ngx_http_gateway_hit_records_slots;
    mask = ngx_http_gateway_hit_records_nslots - 1;
    i = (size_t) (ngx_http_gateway_hit_records_slot(slots, mask + 1, id)
                  - slots);
    if (slots[i].id == 0) {
        return;
    }

    ngx_http_gateway_hit_records_dropped += slots[i].len;
    ngx_http_gateway_hit_records_used--;

    for (j = (i + 1) & mask; slots[j].id != 0; j = (j + 1) & mask) {
        home = ngx_http_gateway_hit_id_slot(slots[j].id, mask + 1);
        /* It stays when its probe starts after the hole: in (i, j], cyclic. */
        if (i <= j ? (i < home && home <= j) : (i < home || home <= j)) {
            continue;
        }
        slots[i] = slots[j];
        i = j;
    }
    slots[i].id = 0;
}


static int
ngx_http_gateway_hit_records_grow_index(void)
{
    size_t                                n, i;
    ngx_http_gateway_hit_records_slot_t  *slots, *from;

    n = ngx_http_gateway_hit_records_nslots == 0
        ? NGX_HTTP_GATEWAY_HIT_RECORDS_MIN_SLOTS
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

    size = ngx_http_gateway_hit_records_arena_next(
               ngx_http_gateway_hit_records_arena_size,
               ngx_http_gateway_hit_records_arena_used, need,
               ngx_http_gateway_hit_records_max_bytes);
    if (size == 0) {
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
