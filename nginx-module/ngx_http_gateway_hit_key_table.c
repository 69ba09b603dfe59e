/*
 * An API key against its record in the key table's replica
 * (lua/gateway/key_table.lua), which the sidecar keeps whole in a shared dict:
 * whether the replica is trusted now, the record (from this worker's copies,
 * ngx_http_gateway_hit_records.c, or the dict), whether an id it does not hold
 * is nobody's, and the sweep that copies the records into this worker ahead of
 * any request for them. docs/decisions/20261127-key-table-replica.md.
 */
#include "ngx_http_gateway_hit_module.h"
#include "ngx_http_gateway_hit_ids.h"
#include "ngx_http_gateway_hit_records.h"


/* The sweep that copies the key table's records into this worker ahead of any
 * request for them (ngx_http_gateway_hit_sweep): its timer, the next id it
 * reads, the copies' generation it is sweeping for, and whether the copies are
 * full. */
#define NGX_HTTP_GATEWAY_HIT_SWEEP_BATCH    256
#define NGX_HTTP_GATEWAY_HIT_SWEEP_GAP_MS   1
#define NGX_HTTP_GATEWAY_HIT_SWEEP_IDLE_MS  1000
/* Ids swept only while the largest is at most this many times the records held
 * (ids come from a sequence: gaps are deleted clients); a sparser table is
 * copied by use alone. */
#define NGX_HTTP_GATEWAY_HIT_SWEEP_SPARSE   4

/* A number the key table holds under one of its own keys (GW_KEY_TABLE_*). */
#define ngx_http_gateway_hit_table_number(key, n)                             \
    ngx_http_gateway_hit_read_number(ngx_http_gateway_hit_key_table_zone,     \
                                     (u_char *) key, sizeof(key) - 1, n)

/* A string the key table holds (a record, a `#changed:` slot), into `buf`. */
#define ngx_http_gateway_hit_table_string(key, len, buf)                      \
    ngx_http_gateway_hit_read_string(ngx_http_gateway_hit_key_table_zone,     \
                                     key, len, buf)


static size_t ngx_http_gateway_hit_table_record(ngx_str_t *id, u_char *buf,
    ngx_int_t versioned, double version, ngx_flag_t *nobody);
static ngx_flag_t ngx_http_gateway_hit_no_client(ngx_str_t *id, double max_id);
static void ngx_http_gateway_hit_copies_follow(double version);
static void ngx_http_gateway_hit_sweep(ngx_event_t *ev);
static ngx_flag_t ngx_http_gateway_hit_sweep_due(double *version,
    double *max_id);
static ngx_uint_t ngx_http_gateway_hit_sweep_batch(ngx_log_t *log,
    double version, double max_id);


static ngx_event_t       ngx_http_gateway_hit_sweep_event;
/* What nginx's timer code reads as the event's connection (its debug log names
 * ev->data's fd): a stand-in whose fd is -1, as nginx's cache manager gives its
 * own timer. */
static ngx_connection_t  ngx_http_gateway_hit_sweep_dumb;
static uint64_t          ngx_http_gateway_hit_sweep_next;
static unsigned long     ngx_http_gateway_hit_sweep_generation;
static ngx_flag_t        ngx_http_gateway_hit_sweep_full;


/* Whether the key table's replica is trusted now (lua/gateway/key_table.lua's
 * lookup): loaded whole, and its sidecar said the feed was live within
 * key_table.trust_s. */
ngx_flag_t
ngx_http_gateway_hit_key_table_trusted(void)
{
    double  until = 0;

    return ngx_http_gateway_hit_key_table_zone != NULL
           && ngx_http_gateway_hit_table_number(GW_KEY_TABLE_TRUSTED_UNTIL,
                                                &until)
              == NGX_OK
           && ngx_http_gateway_hit_now() < until;
}


/* An API key against its record in the key table
 * (ngx_http_gateway_hit_parse_key_table_record): 1 with the key's client in
 * `identity` (pointing into `buf`, RECORD_BUFFER bytes, or into this worker's
 * copy); a record that is absent, damaged or does not pass is Lua's to refuse;
 * *nobody = 1 for an id the table does not hold and nobody has
 * (ngx_http_gateway_hit_no_client). */
ngx_flag_t
ngx_http_gateway_hit_key_table(ngx_str_t *id, u_char *secret, u_char *buf,
    ngx_http_gateway_hit_identity_t *identity, ngx_flag_t *nobody)
{
    u_char                      digest[NGX_HTTP_GATEWAY_HIT_DIGEST_LEN];
    u_char                     *rec;
    size_t                      len;
    double                      version = 0, now;
    ngx_int_t                   versioned;
    ngx_http_gateway_hit_str_t  key_id;

    /* This worker's copy of the record while the table has not changed since it
     * was made; else the shared dict's, copied for the next request. */
    versioned = ngx_http_gateway_hit_table_number(GW_KEY_TABLE_VERSION,
                                                  &version);
    if (versioned != NGX_OK) {
        ngx_http_gateway_hit_records_forget();
    } else {
        ngx_http_gateway_hit_copies_follow(version);
    }

    if (versioned != NGX_OK
        || !ngx_http_gateway_hit_records_find(id->data, id->len, version,
                                              (const u_char **) &rec, &len))
    {
        len = ngx_http_gateway_hit_table_record(id, buf, versioned, version,
                                                nobody);
        if (len == 0) {
            return 0;
        }

        rec = buf;
    }

    ngx_http_gateway_hit_digest(secret, digest);
    key_id.data = id->data;
    key_id.len = id->len;

    now = ngx_http_gateway_hit_now();

    return ngx_http_gateway_hit_parse_key_table_record(rec, len, &key_id,
                                                       digest, now, identity);
}


/* Key id `id`'s record read from the shared dict into `buf` and copied for the
 * next request (when the table has a version): its length, or 0 when there is
 * none to judge, *nobody = 1 when that is because the id is nobody's. */
static size_t
ngx_http_gateway_hit_table_record(ngx_str_t *id, u_char *buf,
    ngx_int_t versioned, double version, ngx_flag_t *nobody)
{
    size_t  len;
    double  max_id, probe;

    /* An id above the largest one held is not held: not searched for (what a
     * flood of guessed ids would cost every request). A table without a largest
     * id is Lua's. */
    if (ngx_http_gateway_hit_table_number(GW_KEY_TABLE_MAX_ID, &max_id)
        != NGX_OK)
    {
        return 0;
    }

    if ((double) ngx_http_gateway_hit_id_number(id->data, id->len) > max_id) {
        *nobody = ngx_http_gateway_hit_no_client(id, max_id);
        return 0;
    }

    len = ngx_http_gateway_hit_table_string(id->data, id->len, buf);
    if (len == 0) {
        /* Nothing read: absent, or a value this buffer cannot hold (a large
         * record: then Lua's). Only an absence asks whether the id is
         * nobody's. */
        *nobody = ngx_http_gateway_hit_read_number(
                      ngx_http_gateway_hit_key_table_zone, id->data, id->len,
                      &probe)
                      == NGX_DECLINED
                  && ngx_http_gateway_hit_no_client(id, max_id);
        return 0;
    }

    if (versioned == NGX_OK) {
        (void) ngx_http_gateway_hit_records_keep(id->data, id->len, version,
                                                 buf, len);
    }

    return len;
}


/* Whether key id `id`, which the trusted key table does not hold, is nobody's,
 * as lua/gateway/key_table.lua's nobody() says (read now, not once a tick): the
 * sidecar said the feed was live within key_table's live seconds (no notice
 * pending), the table has held every record it was sent, and the id is not
 * within the new-id band of the largest held `max_id`, below or above (maybe a
 * client created on another pair a moment ago). */
static ngx_flag_t
ngx_http_gateway_hit_no_client(ngx_str_t *id, double max_id)
{
    double  live_until, full, n;

    if (ngx_http_gateway_hit_table_number(GW_KEY_TABLE_LIVE_UNTIL, &live_until)
            != NGX_OK
        || ngx_http_gateway_hit_now() >= live_until)
    {
        return 0;
    }

    /* Full is `true` when present: anything but absent is a table that may lack
     * a client. */
    if (ngx_http_gateway_hit_table_number(GW_KEY_TABLE_FULL, &full)
        != NGX_DECLINED)
    {
        return 0;
    }

    n = (double) ngx_http_gateway_hit_id_number(id->data, id->len);

    /* Ids near the largest held may be a client whose creation committed a
     * moment ago: below it, out of id order beside other creators; above it,
     * ahead of its notice (a bulk import as much as one creation). Asked about,
     * never refused. */
    return n + GW_KEY_TABLE_NEW_ID_BAND < max_id
           || n > max_id + GW_KEY_TABLE_NEW_ID_REACH;
}


/* Brings this worker's copies of records to the key table's `version`: through
 * the ids each version since theirs changed (the `#changed:` slots
 * lua/gateway/key_table.lua writes after moving the version on), or, when that
 * cannot be told (a load, more versions than the slots, a slot reused or not
 * written yet, a change of more ids than a slot holds), by dropping them all.
 * One comparison while nothing changed. */
static void
ngx_http_gateway_hit_copies_follow(double version)
{
    u_char   key[sizeof(GW_KEY_TABLE_CHANGED_PREFIX) + NGX_INT64_LEN];
    u_char   buf[NGX_HTTP_GATEWAY_HIT_RECORD_BUFFER];
    u_char  *last;
    size_t   len;
    double   at, next;

    if (ngx_http_gateway_hit_records_version(&at)) {
        if (at == version) {
            return;
        }

    } else {
        at = version + 1;  /* none: started below */
    }

    if (version < at || version - at > GW_KEY_TABLE_CHANGED_SLOTS) {
        ngx_http_gateway_hit_records_start(version);
        return;
    }

    for (next = at + 1; next <= version; next++) {
        last = ngx_sprintf(key, GW_KEY_TABLE_CHANGED_PREFIX "%uL",
                           (uint64_t) next % GW_KEY_TABLE_CHANGED_SLOTS);
        len = ngx_http_gateway_hit_table_string(key, last - key, buf);
        if (len == 0 || !ngx_http_gateway_hit_records_follow(buf, len, next)) {
            ngx_http_gateway_hit_records_start(version);
            return;
        }
    }
}


/* Every second, and every millisecond while it has ids left: copies up to
 * SWEEP_BATCH records of the trusted key table, in id order, into this worker's
 * copies, so that after a load (a start, 10⁶ clients) a request finds its
 * record in the worker's own memory instead of walking the dict's tree
 * (docs/decisions/20261129-worker-copies-kept.md). It starts again from the
 * first id whenever the copies are all dropped, and goes on to ids added since;
 * it stops while the copies are full. Counted as `module_copied`. */
static void
ngx_http_gateway_hit_sweep(ngx_event_t *ev)
{
    double      version, max_id;
    ngx_uint_t  copied;
    ngx_msec_t  delay;

    if (ngx_exiting || ngx_quit || ngx_terminate) {
        return;
    }

    delay = NGX_HTTP_GATEWAY_HIT_SWEEP_IDLE_MS;

    if (ngx_http_gateway_hit_sweep_due(&version, &max_id)) {
        ngx_http_gateway_hit_copies_follow(version);

        if (ngx_http_gateway_hit_records_generation()
            != ngx_http_gateway_hit_sweep_generation)
        {
            ngx_http_gateway_hit_sweep_generation =
                ngx_http_gateway_hit_records_generation();
            ngx_http_gateway_hit_sweep_next = 1;
            ngx_http_gateway_hit_sweep_full = 0;
        }

        copied = ngx_http_gateway_hit_sweep_batch(ev->log, version, max_id);

        if (copied != 0) {
            ngx_http_gateway_hit_counter_add(GW_MODULE_COPIED_COUNTER,
                                             (double) copied);
        }

        if (!ngx_http_gateway_hit_sweep_full
            && (double) ngx_http_gateway_hit_sweep_next <= max_id)
        {
            delay = NGX_HTTP_GATEWAY_HIT_SWEEP_GAP_MS;
        }
    }

    ngx_add_timer(ev, delay);
}


/* Whether the sweep has a table to copy: trusted, with a version and a largest
 * id, and dense enough (SWEEP_SPARSE). */
static ngx_flag_t
ngx_http_gateway_hit_sweep_due(double *version, double *max_id)
{
    double  records;

    return ngx_http_gateway_hit_key_table_trusted()
           && ngx_http_gateway_hit_table_number(GW_KEY_TABLE_VERSION, version)
              == NGX_OK
           && ngx_http_gateway_hit_table_number(GW_KEY_TABLE_MAX_ID, max_id)
              == NGX_OK
           && ngx_http_gateway_hit_table_number(GW_KEY_TABLE_RECORDS, &records)
              == NGX_OK
           && *max_id <= NGX_HTTP_GATEWAY_HIT_SWEEP_SPARSE * records;
}


/* Up to SWEEP_BATCH ids from the sweep's next, their records copied unless they
 * are already (or there is no such id, or the copies are full): how many were
 * copied. */
static ngx_uint_t
ngx_http_gateway_hit_sweep_batch(ngx_log_t *log, double version, double max_id)
{
    u_char         id[NGX_INT64_LEN];
    u_char         buf[NGX_HTTP_GATEWAY_HIT_RECORD_BUFFER];
    const u_char  *rec;
    size_t         id_len, len;
    ngx_int_t      kept;
    ngx_uint_t     n, copied;

    copied = 0;

    for (n = 0;
         n < NGX_HTTP_GATEWAY_HIT_SWEEP_BATCH
         && !ngx_http_gateway_hit_sweep_full
         && (double) ngx_http_gateway_hit_sweep_next <= max_id;
         n++, ngx_http_gateway_hit_sweep_next++)
    {
        id_len = ngx_sprintf(id, "%uL", ngx_http_gateway_hit_sweep_next) - id;

        if (ngx_http_gateway_hit_records_find(id, id_len, version, &rec, &len))
        {
            continue;
        }

        len = ngx_http_gateway_hit_table_string(id, id_len, buf);
        if (len == 0) {
            /* no such id (a deleted client), or a record over the buffer */
            continue;
        }

        kept = ngx_http_gateway_hit_records_keep(id, id_len, version, buf, len);
        if (kept < 0) {
            ngx_http_gateway_hit_sweep_full = 1;
            ngx_log_error(NGX_LOG_NOTICE, log, 0,
                          GW_DIRECTIVE ": this worker's copies of the key "
                          "table are full at id %uL of %.0f: the rest are "
                          "read from the table",
                          ngx_http_gateway_hit_sweep_next, max_id);
            break;
        }
        copied += (ngx_uint_t) kept;
    }

    return copied;
}


/* In each worker of a configuration with a key table: the copies' limit, and
 * the sweep's first turn. */
void
ngx_http_gateway_hit_sweep_start(ngx_cycle_t *cycle)
{
    /* A worker may copy as much as the table holds (its records are the table's
     * values without the dict's node of about 80 bytes each), up to the arena's
     * cap of 4 GiB - 1: a table larger than that holds more than the index does
     * (2^20 copies). */
    (void) ngx_http_gateway_hit_records_limit(
        ngx_max((size_t) NGX_HTTP_GATEWAY_HIT_RECORDS_MAX_BYTES,
                ngx_http_gateway_hit_key_table_zone->shm.size));

    ngx_http_gateway_hit_sweep_event.handler = ngx_http_gateway_hit_sweep;
    ngx_http_gateway_hit_sweep_event.log = cycle->log;
    ngx_http_gateway_hit_sweep_dumb.fd = (ngx_socket_t) -1;
    ngx_http_gateway_hit_sweep_event.data = &ngx_http_gateway_hit_sweep_dumb;
    /* A worker shutting down gracefully does not wait for it. */
    ngx_http_gateway_hit_sweep_event.cancelable = 1;
    ngx_add_timer(&ngx_http_gateway_hit_sweep_event,
                  NGX_HTTP_GATEWAY_HIT_SWEEP_IDLE_MS);
}
