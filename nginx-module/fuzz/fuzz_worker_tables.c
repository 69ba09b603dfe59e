/*
 * libFuzzer target: the worker's own tables, the record copies
 * (ngx_http_gateway_hit_records.c) and the usage counts
 * (ngx_http_gateway_hit_usage.c), driven by a sequence of operations read from
 * the input and checked against a plain model: a find gives back exactly the
 * bytes kept for that id at that version (or nothing), every count comes out of
 * the takes once.
 *
 * Operations, one byte each then their arguments: keep (id, version, record),
 * find (id, version), forget, count (row), take (a buffer size, until a take
 * gives nothing), start (version), follow (a change's text built from the
 * input: the next version or another, ids, and sometimes a flaw; a 0 starts the
 * copies over, as the module does), follow with the raw bytes of the input as
 * text, limit (the arena's bytes, small, so that full arenas and the start-over
 * of one full of dropped copies are reached).
 *
 * Once, before the first input: the arena's arithmetic past 4 GiB
 * (check_past_4g), with the sizes as numbers, nothing allocated: a slot's
 * offset is 32 bits, and an arena allowed to grow past 4 GiB (a key_table.size
 * of 8g) placed records at offsets that wrapped.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ngx_http_gateway_hit_ids.h"
#include "ngx_http_gateway_hit_records.h"
#include "ngx_http_gateway_hit_usage.h"

#define MODEL_IDS  32
#define VERSIONS   8

/* The model: ids are small numbers here, "1".."32" (and invalid ones, never
 * kept). */
static struct {
    int            have_version;
    double         version;
    int            kept[MODEL_IDS + 1];
    unsigned char  rec[MODEL_IDS + 1][256];
    size_t         len[MODEL_IDS + 1];
    unsigned long  counts[MODEL_IDS + 1];
} model;

typedef struct {
    const uint8_t  *p;
    size_t          left;
} input_t;

static int
take_byte(input_t *in, uint8_t *b)
{
    if (in->left == 0) {
        return 0;
    }
    *b = *in->p++;
    in->left--;
    return 1;
}

/* The id of each model index: 1..16 themselves; 17..32 ids whose probes start
 * at one slot, or at the next one, of the tables' smallest index (4096 slots),
 * so that copies collide and a copy dropped from the middle of a run is
 * exercised (consecutive ids never collide). */
static uint64_t  idmap[MODEL_IDS + 1];

static void
make_idmap(void)
{
    uint64_t  id;
    size_t    home;
    int       at = 17, here = 0, next = 0;

    for (id = 1; id <= 16; id++) {
        idmap[id] = id;
    }
    home = ngx_http_gateway_hit_id_slot(1000, 4096);
    for (id = 1000; at <= MODEL_IDS; id++) {
        if (ngx_http_gateway_hit_id_slot(id, 4096) == home && here < 8) {
            idmap[at++] = id;
            here++;
        } else if (ngx_http_gateway_hit_id_slot(id, 4096) == ((home + 1) & 4095) && next < 8) {
            idmap[at++] = id;
            next++;
        }
    }
}

/* The model index of row `row`, 0 for none. */
static int
model_index(unsigned long row)
{
    int  i;

    for (i = 1; i <= MODEL_IDS; i++) {
        if (idmap[i] == row) {
            return i;
        }
    }
    return 0;
}

/* An id's text from one byte: one of the model's mostly, sometimes "0", "07" or
 * "1x" (never valid) or nothing. */
static size_t
id_text(uint8_t b, char *buf, int *n)
{
    *n = b % (MODEL_IDS + 4);
    if (*n == 0) {
        *n = -1;
        return (size_t) snprintf(buf, 16, "0");
    }
    if (*n == MODEL_IDS + 1) {
        *n = -1;
        return (size_t) snprintf(buf, 16, "07");
    }
    if (*n == MODEL_IDS + 2) {
        *n = -1;
        return (size_t) snprintf(buf, 16, "1x");
    }
    if (*n == MODEL_IDS + 3) {
        *n = -1;
        return 0;
    }
    return (size_t) snprintf(buf, 16, "%llu", (unsigned long long) idmap[*n]);
}

#if SIZE_MAX > UINT32_MAX
#define GIB  ((size_t) 1 << 30)

/* The arena's growth as _keep drives it, from empty with a limit of 8 GiB,
 * records of 2 KiB (the module's buffer), sizes as numbers: every record's
 * place fits a slot's 32 bits and comes back from them whole (the offsets reach
 * past 2^31 up to the cap), the arena stops at the cap, full; and the growth's
 * property over sizes, places, needs and limits past 4 GiB. Without the cap the
 * growth plans 8 GiB and a record's offset past 2^32 comes back as another
 * place. */
static void
check_past_4g(void)
{
    static const size_t  sizes[] = { 0, 256u << 10, 64u << 20, 2 * GIB, 3 * GIB, 4 * GIB - 1,
                                     4 * GIB, 4 * GIB + 4096, 8 * GIB, (size_t) 1 << 40 };
    static const size_t  needs[] = { 1, 100, 2048, 1u << 20, 2 * GIB, 4 * GIB - 1, 4 * GIB,
                                     4 * GIB + 1, SIZE_MAX };
    static const size_t  limits[] = { 0, 4080, 64u << 20, 2 * GIB, 4 * GIB - 1, 4 * GIB,
                                      8 * GIB, (size_t) 1 << 40, SIZE_MAX };
    const size_t         cap = NGX_HTTP_GATEWAY_HIT_RECORDS_ARENA_CAP, len = 2048;
    size_t               size, used, next, max, top, s, u, n, m, k, room;
    uint32_t             offset32, len32;
    size_t               lasts[4];

    if (cap > UINT32_MAX || ngx_http_gateway_hit_records_limit(8 * GIB) != cap
        || ngx_http_gateway_hit_records_limit(SIZE_MAX) != cap
        || ngx_http_gateway_hit_records_limit(64u << 20) != (64u << 20))
    {
        abort();  /* a limit past the cap kept */
    }

    size = 0;
    used = 0;
    top = 0;
    for ( ;; ) {
        if (len > size - used) {
            next = ngx_http_gateway_hit_records_arena_next(size, used, len, 8 * GIB);
            if (next == 0) {
                break;  /* full: _keep starts over, or refuses */
            }
            if (next <= size) {
                abort();  /* shrunk (past the cap: the offsets below say so) */
            }
            size = next;
        }
        if (!ngx_http_gateway_hit_records_fits(used, len)) {
            abort();  /* a place the arena holds refused */
        }
        offset32 = (uint32_t) used;
        len32 = (uint32_t) len;
        if ((size_t) offset32 != used || (size_t) len32 != len
            || (size_t) offset32 + len32 > size)
        {
            abort();  /* the slot's place is another one: a wrong record read */
        }
        top = used;
        used += len;
    }
    if (size != cap || top < 4 * GIB - 2 * len || used + len <= cap) {
        abort();  /* stopped short of the cap, or past it */
    }

    /* A place past 2^32 never fits, nor one whose end wraps. */
    if (ngx_http_gateway_hit_records_fits(4 * GIB + 16, 1)
        || ngx_http_gateway_hit_records_fits(4 * GIB, 0)
        || ngx_http_gateway_hit_records_fits(cap - len, len + 1)
        || !ngx_http_gateway_hit_records_fits(cap - len, len)
        || ngx_http_gateway_hit_records_fits(SIZE_MAX, 1)
        || ngx_http_gateway_hit_records_fits(1, SIZE_MAX))
    {
        abort();
    }

    for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
        size = sizes[s];
        lasts[0] = 0;
        lasts[1] = size / 2;
        lasts[2] = size > 4096 ? size - 4096 : 0;
        lasts[3] = size;
        for (u = 0; u < 4; u++) {
            used = lasts[u];
            for (n = 0; n < sizeof(needs) / sizeof(needs[0]); n++) {
                for (m = 0; m < sizeof(limits) / sizeof(limits[0]); m++) {
                    max = limits[m] < cap ? limits[m] : cap;
                    next = ngx_http_gateway_hit_records_arena_next(size, used, needs[n],
                                                                   limits[m]);
                    room = used <= max && needs[n] <= max - used && max > size;
                    if (next == 0) {
                        if (room) {
                            abort();  /* refused with room under the limit */
                        }
                        continue;
                    }
                    if (next <= size || next > max || next - used < needs[n]
                        || !ngx_http_gateway_hit_records_fits(used, needs[n]))
                    {
                        abort();  /* a size that does not hold them, or past the cap */
                    }
                    /* doubled, the first the smallest arena, or the limit */
                    k = size == 0 ? (size_t) 256 << 10 : size;
                    while (k < next) {
                        k *= 2;
                    }
                    if (k != next && next != max) {
                        abort();
                    }
                }
            }
        }
    }

    ngx_http_gateway_hit_records_limit(NGX_HTTP_GATEWAY_HIT_RECORDS_MAX_BYTES);
}
#else
static void
check_past_4g(void)
{
}
#endif

static void
drain_usage(size_t size, int check)
{
    unsigned char  *buf = malloc(size);
    unsigned long   seen[MODEL_IDS + 1] = { 0 };
    size_t          n, i;
    unsigned long   row, count;
    int             rounds = 0;

    while ((n = ngx_http_gateway_hit_usage_take(buf, size)) != 0) {
        if (n > size || ++rounds > 10000) {
            abort();
        }
        for (i = 0; i < n; ) {
            char  line[64];
            size_t  j = 0;

            while (i < n && buf[i] != '\n' && j < sizeof(line) - 1) {
                line[j++] = (char) buf[i++];
            }
            line[j] = '\0';
            if (i >= n || buf[i] != '\n' || sscanf(line, "%lu %lu", &row, &count) != 2) {
                abort();  /* only whole lines "<row> <n>\n" */
            }
            i++;
            if (model_index(row) == 0 || count == 0) {
                abort();
            }
            seen[model_index(row)] += count;
        }
    }
    free(buf);
    if (check) {
        for (i = 1; i <= MODEL_IDS; i++) {
            if (seen[i] != model.counts[i]) {
                abort();  /* a count lost or given twice */
            }
        }
    }
    memset(model.counts, 0, sizeof(model.counts));
}

/* The copies start over at `version`, model and code alike. */
static void
model_start(double version)
{
    ngx_http_gateway_hit_records_start(version);
    memset(model.kept, 0, sizeof(model.kept));
    model.have_version = 1;
    model.version = version;
}

/* A change's text from the input: a byte of shape (the next version or another;
 * a flaw: a "*", a letter, a doubled space, an id 0), a count of ids, one byte
 * each. The code must follow it exactly when it is the next version's clean
 * list, dropping the ids named, and refuse it otherwise (then the copies start
 * over, as the module starts them). */
static int
follow_built(input_t *in)
{
    uint8_t  shape, count, b;
    char     text[512];
    size_t   len, id_len;
    int      n, clean, named[MODEL_IDS + 1] = { 0 }, i;
    double   version;
    char     id[16];

    if (!take_byte(in, &shape) || !take_byte(in, &count)) {
        return 0;
    }

    version = (shape & 1) || !model.have_version ? (double) ((shape >> 4) % VERSIONS)
                                                 : model.version + 1;
    clean = model.have_version && version == model.version + 1;
    len = (size_t) snprintf(text, sizeof(text), "%.0f", version);

    for (i = 0; i < count % 12; i++) {
        if (!take_byte(in, &b)) {
            return 0;
        }
        id_len = id_text(b, id, &n);
        if (n <= 0) {
            clean = 0;  /* "0", "07", "1x", or nothing between two spaces */
        } else {
            named[n] = 1;
        }
        text[len++] = ' ';
        memcpy(text + len, id, id_len);
        len += id_len;
    }

    switch ((shape >> 1) & 7) {
    case 1:
        len += (size_t) snprintf(text + len, sizeof(text) - len, " *");
        clean = 0;
        break;
    case 2:
        text[len++] = 'x';
        clean = 0;
        break;
    case 3:
        text[len++] = ' ';
        clean = 0;
        break;
    default:
        break;
    }

    if (ngx_http_gateway_hit_records_follow((const u_char *) text, len, version)) {
        if (!clean) {
            abort();  /* followed a text that does not say which ids changed */
        }
        for (i = 1; i <= MODEL_IDS; i++) {
            if (named[i]) {
                model.kept[i] = 0;
            }
        }
        model.version = version;
        return 1;
    }

    if (clean) {
        abort();  /* refused the next version's clean list */
    }
    model_start(version);
    return 1;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    input_t          in = { data, size };
    uint8_t          op, b, v, l;
    char             id[16];
    size_t           id_len, len, i;
    int              n;
    const u_char    *rec;
    int              kept;
    unsigned long    generation;

    if (idmap[1] == 0) {
        make_idmap();
        check_past_4g();
    }

    /* Each input starts from empty tables, as a new worker does. */
    ngx_http_gateway_hit_records_release();
    ngx_http_gateway_hit_records_limit(NGX_HTTP_GATEWAY_HIT_RECORDS_MAX_BYTES);
    drain_usage(64, 0);
    memset(&model, 0, sizeof(model));

    while (take_byte(&in, &op)) {
        switch (op % 9) {
        case 0:  /* keep */
            if (!take_byte(&in, &b) || !take_byte(&in, &v) || !take_byte(&in, &l)) {
                goto done;
            }
            id_len = id_text(b, id, &n);
            len = l < in.left ? l : in.left;
            generation = ngx_http_gateway_hit_records_generation();
            kept = ngx_http_gateway_hit_records_keep((const u_char *) id, id_len, v % VERSIONS,
                                                     in.p, len);
            if (ngx_http_gateway_hit_records_generation() != generation) {
                /* full of dropped copies: started over at this version */
                if (!model.have_version || model.version != v % VERSIONS) {
                    abort();
                }
                memset(model.kept, 0, sizeof(model.kept));
            }
            if (n > 0 && len > 0 && model.have_version && model.version == v % VERSIONS
                && !model.kept[n])
            {
                if (kept == 1) {
                    model.kept[n] = 1;
                    memcpy(model.rec[n], in.p, len);
                    model.len[n] = len;
                } else if (kept != -1) {
                    abort();  /* refused with room */
                }
            } else if (kept != 0) {
                abort();  /* kept what is not to be kept */
            }
            in.p += len;
            in.left -= len;
            break;
        case 1:  /* find */
            if (!take_byte(&in, &b) || !take_byte(&in, &v)) {
                goto done;
            }
            id_len = id_text(b, id, &n);
            len = 0;
            rec = NULL;
            i = ngx_http_gateway_hit_records_find((const u_char *) id, id_len, v % VERSIONS,
                                                  &rec, &len);
            if (!model.have_version || model.version != v % VERSIONS) {
                if (i != 0) {
                    abort();  /* another version's copy */
                }
                break;
            }
            if (n <= 0 || !model.kept[n]) {
                if (i != 0) {
                    abort();  /* a copy never kept */
                }
            } else if (i != 1 || len != model.len[n] || memcmp(rec, model.rec[n], len) != 0) {
                abort();  /* not the bytes kept */
            }
            break;
        case 2:  /* forget */
            ngx_http_gateway_hit_records_forget();
            memset(model.kept, 0, sizeof(model.kept));
            model.have_version = 0;
            break;
        case 3:  /* count */
            if (!take_byte(&in, &b)) {
                goto done;
            }
            id_len = id_text(b, id, &n);
            if ((ngx_http_gateway_hit_usage_count((const u_char *) id, id_len) == 0) != (n > 0)) {
                abort();  /* a row counted or refused against its shape */
            }
            if (n > 0) {
                model.counts[n]++;
            }
            break;
        case 4:  /* take */
            if (!take_byte(&in, &b)) {
                goto done;
            }
            drain_usage(40 + b, 1);
            break;
        case 5:  /* start */
            if (!take_byte(&in, &v)) {
                goto done;
            }
            model_start(v % VERSIONS);
            break;
        case 6:  /* follow a change's text built from the input */
            if (!follow_built(&in)) {
                goto done;
            }
            break;
        case 7:  /* follow the input's own bytes */
            if (!take_byte(&in, &l) || !take_byte(&in, &v)) {
                goto done;
            }
            len = l < in.left ? l : in.left;
            if (!ngx_http_gateway_hit_records_follow(in.p, len, v % VERSIONS)) {
                model_start(v % VERSIONS);
            } else if (!model.have_version || model.version + 1 != v % VERSIONS) {
                abort();  /* followed from a version the copies are not at */
            } else {
                /* which ids the bytes named is the parser's to say: start the
                 * model over */
                model_start(v % VERSIONS);
            }
            in.p += len;
            in.left -= len;
            break;
        default:  /* limit */
            if (!take_byte(&in, &b)) {
                goto done;
            }
            if (ngx_http_gateway_hit_records_limit((size_t) b * 16) != (size_t) b * 16) {
                abort();  /* a limit under the cap not kept */
            }
            break;
        }
    }

done:
    drain_usage(4096, 1);
    ngx_http_gateway_hit_records_release();
    ngx_http_gateway_hit_usage_release();
    return 0;
}
