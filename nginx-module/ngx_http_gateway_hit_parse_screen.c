/*
 * The header screens (lua/gateway/request_check.lua's, or stricter), on bytes
 * alone: HTTP/1's block as nginx left it in its buffer, and one HTTP/2 value as
 * nginx decoded it. Fuzzed as fuzz_screen; ngx_http_gateway_hit_request_check.c
 * finds the bytes.
 */
#include <string.h>

#include "gateway_contract.h"
#include "ngx_http_gateway_hit_parse.h"

#define CR  '\r'
#define LF  '\n'


static int ngx_http_gateway_hit_token_char(u_char c);


/* RFC 9110's token characters. */
static int
ngx_http_gateway_hit_token_char(u_char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z')
           || (c >= 'A' && c <= 'Z')
           || (c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}


/*
 * HTTP/1's header block from the end of the request line to the end of what
 * nginx parsed, as nginx left it in its buffer, where it wrote a NUL over each
 * name's colon and at each value's end (over its CR, or its first trailing
 * blank) of every line it kept: every line a token, then the colon, then a
 * value that is not empty and has no control byte but tab; at most
 * GW_MAX_HEADERS lines. The Lua screen (lua/gateway/request_check.lua) refuses
 * a line without a colon, a name that is not a token and control bytes, and
 * counts lines: this passes less. An empty value goes to Lua, and so does a
 * line nginx dropped without a word (a name with other bytes than letters,
 * digits and `-`, such as `X.A`, `X_A` or `X!A`: nginx neither refuses it nor
 * writes its NULs, so its CR reads as a control byte here); Lua passes both, as
 * nginx does.
 */
int
ngx_http_gateway_hit_screen_block(u_char *p, u_char *end)
{
    u_char      c;
    unsigned    lines = 0;

    if (p < end && (*p == CR || *p == '\0')) {
        p++;
    }
    if (p >= end || *p != LF) {
        return 0;
    }
    p++;
    for ( ;; ) {
        if (p >= end) {
            return 0;
        }
        if (*p == CR || *p == LF) {
            return 1;  /* the empty line that ends the block */
        }
        if (++lines > GW_MAX_HEADERS || !ngx_http_gateway_hit_token_char(*p)) {
            return 0;
        }
        while (p < end && ngx_http_gateway_hit_token_char(*p)) {
            p++;
        }
        if (p >= end || (*p != ':' && *p != '\0')) {
            return 0;
        }
        for (p++; p < end && (*p == ' ' || *p == '\t'); p++) { /* void */ }
        if (p >= end || *p == '\0' || *p == CR || *p == LF) {
            return 0;
        }
        for ( /* void */ ; p < end && *p != '\0'; p++) {
            c = *p;
            if ((c < 0x20 && c != '\t') || c == 0x7f) {
                return 0;
            }
        }
        /* the value's end: blanks, then CR LF or LF */
        for (p++; p < end && (*p == ' ' || *p == '\t'); p++) { /* void */ }
        if (p < end && *p == CR) {
            p++;
        }
        if (p >= end || *p != LF) {
            return 0;
        }
        p++;
    }
}


/* A header value as nginx decoded it from HTTP/2: no control byte but tab. */
int
ngx_http_gateway_hit_screen_value(u_char *p, size_t len)
{
    u_char  *end = p + len;

    for ( /* void */ ; p < end; p++) {
        if ((*p < 0x20 && *p != '\t') || *p == 0x7f) {
            return 0;
        }
    }
    return 1;
}
