/*
 * libFuzzer target: the header screens (ngx_http_gateway_hit_screen_block,
 * _screen_value) on any bytes, as nginx leaves a header block in its buffer
 * (NULs over colons and value ends) or as it decoded an HTTP/2 value. Checked:
 * no read outside the bytes (ASan), and what the block screen passes is what
 * the screen says it passes (checked_block below, written plainly).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ngx_http_gateway_hit_parse.h"

static int
is_token(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
           || (c != 0 && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

/* Every line the screen passed: a token, ':' or NUL, blanks, a value without
 * control bytes but tab that does not start with NUL, CR or LF. Only the facts
 * a passed block must have. */
static void
check_passed_block(const unsigned char *p, const unsigned char *end)
{
    unsigned  lines = 0;

    if (p < end && (*p == '\r' || *p == 0)) {
        p++;
    }
    if (p >= end || *p != '\n') {
        abort();
    }
    for (p++; *p != '\r' && *p != '\n'; ) {
        if (!is_token(*p) || ++lines > 100) {
            abort();
        }
        while (is_token(*p)) {
            p++;
        }
        if (*p != ':' && *p != 0) {
            abort();
        }
        for (p++; *p == ' ' || *p == '\t'; p++) { /* void */ }
        if (*p == 0 || *p == '\r' || *p == '\n') {
            abort();
        }
        for ( /* void */ ; *p != 0; p++) {
            if ((*p < 0x20 && *p != '\t') || *p == 0x7f) {
                abort();
            }
        }
        for (p++; *p == ' ' || *p == '\t'; p++) { /* void */ }
        if (*p == '\r') {
            p++;
        }
        if (*p != '\n') {
            abort();
        }
        p++;
        if (p >= end) {
            abort();
        }
    }
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* A copy the screens may not read past (libFuzzer's own buffer is exact
     * too). */
    unsigned char  *copy = malloc(size ? size : 1);
    size_t          i;
    int             control = 0;

    memcpy(copy, data, size);
    if (ngx_http_gateway_hit_screen_block(copy, copy + size)) {
        check_passed_block(copy, copy + size);
    }
    for (i = 0; i < size; i++) {
        control |= (copy[i] < 0x20 && copy[i] != '\t') || copy[i] == 0x7f;
    }
    if (ngx_http_gateway_hit_screen_value(copy, size) == control) {
        abort();  /* a value passed with a control byte, or refused without one */
    }
    free(copy);
    return 0;
}
