/*
 * A client's permissions (lua/gateway/permissions.lua, common/permissions.ts):
 * 1 only when a rule lets `method` through on the path decided from the raw
 * `target` ($request_uri). A target Lua would refuse as ambiguous, rules it
 * would not parse, and anything this cannot hold (a path past PATH_MAX bytes or
 * SEGMENTS_MAX segments) are 0: Lua's, which refuses or passes it itself. So
 * the module passes only what Lua passes; the caller checks the absolute-form.
 *
 * The steps are Lua's: the method's bit (BITS[method]), decide_path, then each
 * rule of the text parsed (parse, parse_rule) and matched (matches) against the
 * path, as allows does. Pure, fuzzed in fuzz_records;
 * test/lua/permissions-agreement.test.ts holds it to the TypeScript rules.
 */
#include <string.h>

#include "gateway_contract.h"
#include "ngx_http_gateway_hit_parse.h"


#define NGX_HTTP_GATEWAY_HIT_PATH_MAX      4096
#define NGX_HTTP_GATEWAY_HIT_SEGMENTS_MAX  128
/* The most rules a PERMISSIONS_TEXT holds (lua/gateway/permissions.lua's
 * parse). */
#define NGX_HTTP_GATEWAY_HIT_RULES_MAX     1000


/* A decided path: its bytes, decoded once, and where each of its segments is in
 * them. */
typedef struct {
    u_char                   data[NGX_HTTP_GATEWAY_HIT_PATH_MAX];
    size_t                   len;
    size_t                   nseg;
    size_t                   seg_at[NGX_HTTP_GATEWAY_HIT_SEGMENTS_MAX + 1];
    size_t                   seg_len[NGX_HTTP_GATEWAY_HIT_SEGMENTS_MAX + 1];
} ngx_http_gateway_hit_path_t;


static unsigned ngx_http_gateway_hit_method_bit(const u_char *method,
    size_t len);
static int ngx_http_gateway_hit_decide_path(const u_char *target, size_t len,
    ngx_http_gateway_hit_path_t *path);
static int ngx_http_gateway_hit_segments(ngx_http_gateway_hit_path_t *path);
static int ngx_http_gateway_hit_rules_count(const u_char **p, const u_char *end,
    size_t *count);
static int ngx_http_gateway_hit_parse_rule(const u_char **p, const u_char *end,
    unsigned *mask, const u_char **pat, const u_char **pat_end);
static int ngx_http_gateway_hit_matches(const u_char *pat,
    const u_char *pat_end, ngx_http_gateway_hit_path_t *path);
static int ngx_http_gateway_hit_literal(const u_char *s, const u_char *end,
    const u_char *seg, size_t seg_len);


static const char *ngx_http_gateway_hit_rule_methods[] = GW_PERMISSION_METHODS;


int
ngx_http_gateway_hit_permits(const u_char *rules, size_t rules_len,
    const u_char *method, size_t method_len, const u_char *target,
    size_t target_len)
{
    int                           allowed, matched;
    size_t                        count, seen;
    unsigned                      bit, mask;
    const u_char                 *p, *end, *pat, *pat_end;
    ngx_http_gateway_hit_path_t   path;

    bit = ngx_http_gateway_hit_method_bit(method, method_len);
    if (bit == 0 || target_len == 0 || target[0] != '/') {
        return 0;
    }

    if (!ngx_http_gateway_hit_decide_path(target, target_len, &path)) {
        return 0;
    }

    /* Every rule is read to the end, as Lua parses the whole text: rules it
     * would not parse allow nothing. */
    p = rules;
    end = rules + rules_len;
    if (!ngx_http_gateway_hit_rules_count(&p, end, &count)) {
        return 0;
    }

    allowed = 0;

    for (seen = 0; p < end; seen++) {
        if (!ngx_http_gateway_hit_parse_rule(&p, end, &mask, &pat, &pat_end)) {
            return 0;
        }

        matched = ngx_http_gateway_hit_matches(pat, pat_end, &path);
        if (matched < 0) {
            return 0;
        }

        if (matched && (mask & bit)) {
            allowed = 1;
        }
    }

    /* a rule set cut short or padded is not PERMISSIONS_TEXT: it allows nothing
     */
    return allowed && seen == count;
}


/* The method's bit in a rule's mask (contract.permissions.method_bits); 0 for a
 * method no rule names. */
static unsigned
ngx_http_gateway_hit_method_bit(const u_char *method, size_t len)
{
    size_t    i, n;
    unsigned  bit = 0;

    n = sizeof(ngx_http_gateway_hit_rule_methods) / sizeof(char *);

    for (i = 0; i < n; i++) {
        if (strlen(ngx_http_gateway_hit_rule_methods[i]) == len
            && memcmp(ngx_http_gateway_hit_rule_methods[i], method, len) == 0)
        {
            bit = 1u << i;
        }
    }
    return bit;
}


/* decidePath: the part of an origin-form target before '?', decoded once, and
 * its segments; 0 for anything Lua calls ambiguous (every refusal is Lua's) or
 * this cannot hold. */
static int
ngx_http_gateway_hit_decide_path(const u_char *target, size_t len,
    ngx_http_gateway_hit_path_t *path)
{
    u_char  c;
    size_t  i;
    int     hi, lo;

    path->len = 0;

    for (i = 0; i < len && target[i] != '?'; i++) {
        c = target[i];
        if (c <= 0x20 || c == 0x7f || c == '\\' || c == ';' || c == '#') {
            return 0;
        }
        if (c == '%') {
            if (i + 2 >= len) {
                return 0;
            }
            hi = ngx_http_gateway_hit_hex(target[i + 1]);
            lo = ngx_http_gateway_hit_hex(target[i + 2]);
            if (hi < 0 || lo < 0) {
                return 0;
            }
            c = (u_char) (hi << 4 | lo);
            if (c == '/' || c == '\\' || c == '.' || c == '%' || c < 0x20
                || c == 0x7f)
            {
                return 0;
            }
            i += 2;
        }
        if (path->len == sizeof(path->data)) {
            return 0;
        }
        path->data[path->len++] = c;
    }

    return ngx_http_gateway_hit_segments(path);
}


/* A decided path's segments: no '.' or '..', no empty one but a trailing
 * slash's. */
static int
ngx_http_gateway_hit_segments(ngx_http_gateway_hit_path_t *path)
{
    size_t   i, n;
    size_t  *at = path->seg_at, *len = path->seg_len;
    u_char  *d = path->data;

    n = 0;
    at[0] = 1;

    for (i = 1; ; i++) {
        if (i == path->len || d[i] == '/') {
            len[n] = i - at[n];
            if ((len[n] == 1 && d[at[n]] == '.')
                || (len[n] == 2 && d[at[n]] == '.' && d[at[n] + 1] == '.'))
            {
                return 0;
            }
            n++;
            if (i == path->len) {
                break;
            }
            if (len[n - 1] == 0 || n == NGX_HTTP_GATEWAY_HIT_SEGMENTS_MAX) {
                return 0;
            }
            at[n] = i + 1;
        }
    }

    path->nseg = n;
    return 1;
}


/* PERMISSIONS_TEXT's count of rules, <n> (digits, no leading 0, at most
 * RULES_MAX): *p past it. */
static int
ngx_http_gateway_hit_rules_count(const u_char **p, const u_char *end,
    size_t *count)
{
    const u_char  *q = *p;

    if (q == end || *q < '0' || *q > '9'
        || (*q == '0' && q + 1 < end && q[1] != ' '))
    {
        return 0;
    }
    for (*count = 0; q < end && *q >= '0' && *q <= '9'; q++) {
        *count = *count * 10 + (size_t) (*q - '0');
        if (*count > NGX_HTTP_GATEWAY_HIT_RULES_MAX) {
            return 0;
        }
    }
    *p = q;
    return 1;
}


/* One rule of PERMISSIONS_TEXT at *p: ' ', two hex digits of a mask that is not
 * 0, a pattern from '/' to the next ' ' (parse_rule's head; the pattern's
 * segments are checked as it is matched). *p past it. */
static int
ngx_http_gateway_hit_parse_rule(const u_char **p, const u_char *end,
    unsigned *mask, const u_char **pat, const u_char **pat_end)
{
    int            hi, lo;
    const u_char  *q = *p;

    if (*q != ' ' || end - q < 4) {
        return 0;
    }
    hi = ngx_http_gateway_hit_hex(q[1]);
    lo = ngx_http_gateway_hit_hex(q[2]);
    if (hi < 0 || lo < 0 || q[3] != '/') {
        return 0;
    }
    *mask = (unsigned) (hi << 4 | lo);
    if (*mask == 0) {
        return 0;
    }
    *pat = q + 3;
    for (q = *pat; q < end && *q != ' '; q++) { /* void */ }
    *pat_end = q;
    *p = q;
    return 1;
}


/* Whether a pattern matches the path's segments (Lua's matches; its segments
 * checked as parse_rule checks them): 1 or 0; -1 when it is not a pattern. "/"
 * alone is the root only; `*` any segment but an empty one; a final `**` the
 * subtree. Its segments are all read whatever the path, so a pattern is refused
 * the same whether or not it matches. */
static int
ngx_http_gateway_hit_matches(const u_char *pat, const u_char *pat_end,
    ngx_http_gateway_hit_path_t *path)
{
    int            ok, subtree, same;
    size_t         seg_i;
    const u_char  *q, *s, *seg;

    if (pat_end - pat == 1) {
        return path->nseg == 1 && path->seg_len[0] == 0;
    }

    ok = 1;
    subtree = 0;
    seg_i = 0;

    for (q = pat + 1; ; q++) {
        s = q;
        while (q < pat_end && *q != '/') {
            q++;
        }
        if (q == s) {
            return -1;  /* an empty segment: not PERMISSIONS_TEXT */
        }
        if (q - s == 2 && s[0] == '*' && s[1] == '*') {
            if (q != pat_end) {
                return -1;
            }
            subtree = 1;
            break;
        }
        if (seg_i >= path->nseg) {
            ok = 0;
        }
        if (q - s == 1 && s[0] == '*') {
            ok = ok && path->seg_len[seg_i] != 0;

        } else {
            /* compared while this pattern can still match */
            seg = ok ? path->data + path->seg_at[seg_i] : NULL;
            same = ngx_http_gateway_hit_literal(s, q, seg,
                                                ok ? path->seg_len[seg_i] : 0);
            if (same < 0) {
                return -1;
            }
            ok = ok && same;
        }
        seg_i++;
        if (q == pat_end) {
            break;
        }
    }

    return ok && (subtree ? seg_i <= path->nseg : seg_i == path->nseg);
}


/* A pattern's literal segment from s to end, its bytes beyond ASCII as %XX: 1
 * when it is the segment `seg` (NULL: not compared, 0), 0 when not, -1 when it
 * is not a literal. */
static int
ngx_http_gateway_hit_literal(const u_char *s, const u_char *end,
    const u_char *seg, size_t seg_len)
{
    u_char  lit;
    size_t  k;
    int     hi, lo, same;

    same = seg != NULL;

    for (k = 0; s < end; k++, s++) {
        lit = *s;
        if (lit == '*') {
            return -1;
        }
        if (lit == '%') {
            if (end - s < 3) {
                return -1;
            }
            hi = ngx_http_gateway_hit_hex(s[1]);
            lo = ngx_http_gateway_hit_hex(s[2]);
            if (hi < 0 || lo < 0) {
                return -1;
            }
            lit = (u_char) (hi << 4 | lo);
            s += 2;
        }
        if (same && (k >= seg_len || seg[k] != lit)) {
            same = 0;
        }
    }

    return same && k == seg_len;
}
