/*
 * libFuzzer target: the worker's own tables, the record copies (ngx_http_gateway_hit_records.c)
 * and the usage counts (ngx_http_gateway_hit_usage.c), driven by a sequence of operations read
 * from the input and checked against a plain model: a find gives back exactly the bytes kept
 * for that id at that version (or nothing), every count comes out of the takes once.
 *
 * Operations, one byte each then their arguments: keep (id, version, record), find (id,
 * version), forget, count (row), take (a buffer size, until a take gives nothing).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ngx_http_gateway_hit_records.h"
#include "ngx_http_gateway_hit_usage.h"

#define MODEL_IDS  32

/* The model: ids are small numbers here, "1".."32" (and invalid ones, never kept). */
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

/* An id's text from one byte: "1".."32" mostly, sometimes "0", "07" or "1x" (never valid). */
static size_t
id_text(uint8_t b, char *buf, int *n)
{
    *n = b % (MODEL_IDS + 4);
    if (*n == 0) {
        *n = -1;
        return (size_t) snprintf(buf, 8, "0");
    }
    if (*n == MODEL_IDS + 1) {
        *n = -1;
        return (size_t) snprintf(buf, 8, "07");
    }
    if (*n == MODEL_IDS + 2) {
        *n = -1;
        return (size_t) snprintf(buf, 8, "1x");
    }
    if (*n == MODEL_IDS + 3) {
        *n = -1;
        return 0;
    }
    return (size_t) snprintf(buf, 8, "%d", *n);
}

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
            if (row == 0 || row > MODEL_IDS || count == 0) {
                abort();
            }
            seen[row] += count;
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

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    input_t          in = { data, size };
    uint8_t          op, b, v, l;
    char             id[8];
    size_t           id_len, len, i;
    int              n;
    const u_char    *rec;

    /* Each input starts from empty tables, as a new worker does. */
    ngx_http_gateway_hit_records_release();
    drain_usage(64, 0);
    memset(&model, 0, sizeof(model));

    while (take_byte(&in, &op)) {
        switch (op % 5) {
        case 0:  /* keep */
            if (!take_byte(&in, &b) || !take_byte(&in, &v) || !take_byte(&in, &l)) {
                goto done;
            }
            id_len = id_text(b, id, &n);
            len = l < in.left ? l : in.left;
            ngx_http_gateway_hit_records_keep((const u_char *) id, id_len, v % 4, in.p, len);
            if (n > 0 && len > 0 && model.have_version && model.version == v % 4
                && !model.kept[n])
            {
                model.kept[n] = 1;
                memcpy(model.rec[n], in.p, len);
                model.len[n] = len;
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
            i = ngx_http_gateway_hit_records_find((const u_char *) id, id_len, v % 4, &rec,
                                                  &len);
            if (!model.have_version || model.version != v % 4) {
                memset(model.kept, 0, sizeof(model.kept));
                model.have_version = 1;
                model.version = v % 4;
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
        default:  /* take */
            if (!take_byte(&in, &b)) {
                goto done;
            }
            drain_usage(40 + b, 1);
            break;
        }
    }

done:
    drain_usage(4096, 1);
    ngx_http_gateway_hit_records_release();
    ngx_http_gateway_hit_usage_release();
    return 0;
}
