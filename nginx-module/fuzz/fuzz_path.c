/*
 * libFuzzer target: ngx_http_gateway_hit_plain_path on any bytes, as a request
 * target. Checked: no read outside the bytes (ASan), and a path it passes has,
 * up to '?', no '%', space or byte past ASCII and no segment of three or more
 * dots alone (checked plainly below), so nothing
 * lua/gateway/request_check.lua's bad_path refuses is decided by the module.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ngx_http_gateway_hit_parse.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    unsigned char  *copy = malloc(size ? size : 1);
    size_t          i, start, k;
    int             only_dots;

    memcpy(copy, data, size);
    if (ngx_http_gateway_hit_plain_path(copy, size)) {
        start = 0;
        for (i = 0; i <= size; i++) {
            if (i == size || copy[i] == '?' || copy[i] == '/') {
                only_dots = i - start > 2;
                for (k = start; k < i; k++) {
                    only_dots &= copy[k] == '.';
                }
                if (only_dots) {
                    abort();  /* "..." passed */
                }
                if (i == size || copy[i] == '?') {
                    break;
                }
                start = i + 1;
                continue;
            }
            if (copy[i] == '%' || copy[i] == ' ' || copy[i] >= 0x80) {
                abort();
            }
        }
    }
    free(copy);
    return 0;
}
