/*
 * Copies of the key table's records this worker has read, so a hit costs a probe of its own
 * memory instead of a walk down the shared dict's tree of every client (cold in the caches
 * when callers are many). All of them are dropped when the table's version changes: a record
 * stored or deleted, a load, a drop (docs/decisions/20261128-worker-record-copies.md).
 * Pure C: no nginx types.
 */
#ifndef NGX_HTTP_GATEWAY_HIT_RECORDS_H
#define NGX_HTTP_GATEWAY_HIT_RECORDS_H

#include <stddef.h>
#include <sys/types.h>

/* The copy of key id `id`'s record at table version `version`: 1 with it in *rec and *len
 * (valid until the next call of any of these functions), 0 when there is none. A version other
 * than the one the copies were made at drops them all first. */
int ngx_http_gateway_hit_records_find(const u_char *id, size_t id_len, double version,
    const u_char **rec, size_t *len);

/* Keeps a copy of `rec`, read from the table at `version` after a find at that version missed;
 * nothing when there is no room (at most NGX_HTTP_GATEWAY_HIT_RECORDS_MAX_BYTES of records). */
void ngx_http_gateway_hit_records_keep(const u_char *id, size_t id_len, double version,
    const u_char *rec, size_t len);

/* Drops every copy (the table has no version: dropped, or never loaded). */
void ngx_http_gateway_hit_records_forget(void);

/* Frees the index and the arena (the worker's exit: nginx unloads the module before the
 * process ends, so memory still allocated would be a leak to LeakSanitizer, test/sanitizers). */
void ngx_http_gateway_hit_records_release(void);

/* Per worker: 10⁵ records of about 100 bytes take 10 MB, 10⁶ would take 100 MB; past this the
 * records not copied are read from the shared dict as before. */
#define NGX_HTTP_GATEWAY_HIT_RECORDS_MAX_BYTES  (64u << 20)

#endif
