/*
 * Copies of the key table's records in this worker, so a hit costs a probe of
 * its own memory instead of a walk down the shared dict's tree of every client
 * (cold in the caches when callers are many). Tagged with the table's version:
 * a change drops the copies of the ids it names, a load or a change it cannot
 * follow all of them (docs/decisions/20261128-worker-record-copies.md,
 * 20261129-worker-copies-kept.md). Pure C: no nginx types.
 */
#ifndef NGX_HTTP_GATEWAY_HIT_RECORDS_H
#define NGX_HTTP_GATEWAY_HIT_RECORDS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The copy of key id `id`'s record at table version `version`: 1 with it in
 * *rec and *len (valid until the next call of any of these functions), 0 when
 * there is none, or the copies were made at another version (the caller brings
 * them to it first: _start or _follow). */
int ngx_http_gateway_hit_records_find(const u_char *id, size_t id_len,
    double version, const u_char **rec, size_t *len);

/* Keeps a copy of `rec`, read from the table at `version` after a find at that
 * version missed: 1 when kept, 0 when not (one is kept already, not an id, an
 * empty record, another version), -1 when there is no room (at most the limit's
 * bytes of records, 2^20 records). */
int ngx_http_gateway_hit_records_keep(const u_char *id, size_t id_len,
    double version, const u_char *rec, size_t len);

/* The version the copies were made at: 1 with it in *version, 0 when there is
 * none. */
int ngx_http_gateway_hit_records_version(double *version);

/* Drops every copy; the copies are at `version` from now (a load, or changes it
 * cannot follow). Counts a generation. */
void ngx_http_gateway_hit_records_start(double version);

/* The copies move on from version - 1 to `version`, whose changes `text` says
 * (the key table's `#changed:` slot: "<version> <id> <id>..."): the copies of
 * the ids named are dropped, the others kept. 1 when done; 0 when the copies
 * are not at version - 1, or `text` is not that version's list of ids (another
 * version's, "*": more than it holds, or damaged): then nothing can be said of
 * which copies are still good and the caller starts over. */
int ngx_http_gateway_hit_records_follow(const u_char *text, size_t len,
    double version);

/* A number that changes whenever every copy is dropped (_start, _forget): the
 * sweep that copies records ahead of requests starts again from the first id
 * when it moves. */
unsigned long ngx_http_gateway_hit_records_generation(void);

/* At most `bytes` of records (NGX_HTTP_GATEWAY_HIT_RECORDS_MAX_BYTES until
 * set): the key table's size, so a worker may copy all of it; never more than
 * the cap below. Returns the limit set. */
size_t ngx_http_gateway_hit_records_limit(size_t bytes);

/* Whether a record of `len` bytes at `offset` in the arena ends within the cap
 * (so its offset and length fit a slot's 32 bits); no sum that can wrap. */
int ngx_http_gateway_hit_records_fits(size_t offset, size_t len);

/* The size the arena grows to from `size`, `used` bytes of it taken, for `need`
 * bytes more, with a limit of `max` (cut to the cap): doubled (from the
 * smallest arena, 256 KiB) until they fit, at most the limit; 0 when even the
 * limit does not hold them. Pure, for the fuzz target's case past 4 GiB
 * (nginx-module/fuzz/fuzz_worker_tables.c). */
size_t ngx_http_gateway_hit_records_arena_next(size_t size, size_t used,
    size_t need, size_t max);

/* Drops every copy (the table has no version: dropped, or never loaded). */
void ngx_http_gateway_hit_records_forget(void);

/* Frees the index and the arena (the worker's exit: nginx unloads the module
 * before the process ends, so memory still allocated would be a leak to
 * LeakSanitizer, test/sanitizers). */
void ngx_http_gateway_hit_records_release(void);

/* Per worker unless the limit is set: 10⁵ records of about 100 bytes take 10
 * MB, 10⁶ take 100 MB; past the limit the records not copied are read from the
 * shared dict as before. */
#define NGX_HTTP_GATEWAY_HIT_RECORDS_MAX_BYTES  (64u << 20)

/* The arena's bytes at most, whatever the limit (a key_table.size past 4 GiB):
 * 4 GiB - 1, so a slot's offset and length are 32 bits
 * (docs/decisions/20261202-arena-offsets.md). Never a record fewer: the index
 * holds at most 2^20 copies of at most 2 KiB (the module's record buffer), 2
 * GiB; the rest of an arena that full is the bytes of copies dropped, and it
 * starts over. */
#define NGX_HTTP_GATEWAY_HIT_RECORDS_ARENA_CAP  ((size_t) UINT32_MAX)

#endif
