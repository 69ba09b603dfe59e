/*
 * A request target's path, judged plain enough for the module to decide
 * (stricter than lua/gateway/request_check.lua's bad_path). Fuzzed as
 * fuzz_path.
 */
#include "ngx_http_gateway_hit_parse.h"


/* 1 when the raw target's path (up to '?') is one the module may decide: no
 * '%', no space, no byte past ASCII, and no segment of dots only but "." and
 * "..". Stricter than lua/gateway/request_check.lua's bad_path (which decodes
 * first): anything else is Lua's, which refuses a dots-and-spaces segment or
 * non-UTF-8 once decoded as BAD_PATH. */
int
ngx_http_gateway_hit_plain_path(u_char *p, size_t len)
{
    u_char  *end = p + len;
    size_t   dots;
    int      other;

    dots = 0;
    other = 0;

    for ( /* void */ ; p <= end; p++) {
        if (p == end || *p == '?' || *p == '/') {
            if (dots > 2 && !other) {
                return 0;
            }
            if (p == end || *p == '?') {
                return 1;
            }
            dots = 0;
            other = 0;
            continue;
        }
        if (*p == '%' || *p == ' ' || *p >= 0x80) {
            return 0;
        }
        if (*p == '.') {
            dots++;

        } else {
            other = 1;
        }
    }

    return 1;
}
