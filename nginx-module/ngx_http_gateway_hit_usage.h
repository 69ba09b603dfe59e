/*
 * The requests the module passes, counted per client in this worker's own
 * memory and handed to the Lua code once a second (lua/gateway/usage.lua's
 * flush calls the take function through LuaJIT's ffi), which writes them to
 * shared memory as one batch: no shared-dict entry per client and request
 * (docs/decisions/20261128-usage-batches.md).
 */
#ifndef NGX_HTTP_GATEWAY_HIT_USAGE_H
#define NGX_HTTP_GATEWAY_HIT_USAGE_H

#include <stddef.h>
#include <sys/types.h>

#include "gateway_contract.h"

/* One request of the client whose row (a key id's digits) is `row`: 0 when it
 * was counted, -1 when it could not be (not a row of digits, no memory): the
 * caller counts it another way. */
int ngx_http_gateway_hit_usage_count(const u_char *row, size_t len);

/* Writes the counts as lines "<row> <n>\n" into buf (at least 40 bytes), as
 * many whole lines as fit; returns the bytes written, 0 when nothing is left.
 * Called from Lua (ffi, the name from common/contract.ts) again and again until
 * it returns 0, with nothing counted in between (one Lua function that does not
 * yield): the table is emptied when the last line is written. Declared by the
 * contract's name, defined as ngx_http_gateway_hit_usage_take. */
size_t GW_USAGE_TAKER(u_char *buf, size_t size);

/* Frees the table (the worker's exit: nginx unloads the module before the
 * process ends, so a table still allocated would be a leak to LeakSanitizer in
 * the sanitizer suite). */
void ngx_http_gateway_hit_usage_release(void);

#endif
