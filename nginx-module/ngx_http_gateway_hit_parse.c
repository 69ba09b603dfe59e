/*
 * The gateway's nginx module's pure parts (ngx_http_gateway_hit_parse.h): what it reads from
 * the request and the shared dicts, parsed and judged from bytes alone. Each says 1 only when
 * the Lua code would say the same; anything else is 0, and the request is Lua's.
 */
#include <string.h>
#include <openssl/crypto.h>

#include "gateway_contract.h"
#include "ngx_http_gateway_hit_ids.h"
#include "ngx_http_gateway_hit_parse.h"

#define CR  '\r'
#define LF  '\n'

/* A learnt key record's and a cached decision's fields: their order is the contract's
 * (common/contract.ts LEARNT_KEY_FIELDS, DECISION_FIELDS), which lua/gateway/keys.lua and
 * entry.lua write (test/lua/cases hold them to it). The rate limit and the permissions are
 * the last, optional: absent from a record stored before limits, and for a client without
 * rules. */
#define F_CREATED        GW_KEY_FIELD_CREATED
#define F_KIND           GW_KEY_FIELD_KIND
#define F_EXPIRES_AT     GW_KEY_FIELD_EXPIRES_AT
#define F_PREVIOUS_UNTIL GW_KEY_FIELD_PREVIOUS_UNTIL
#define F_IS_ADMIN       GW_KEY_FIELD_IS_ADMIN
#define F_CLIENT_ID      GW_KEY_FIELD_CLIENT_ID
#define F_CLIENT_NAME    GW_KEY_FIELD_CLIENT_NAME
#define F_HASH           GW_KEY_FIELD_HASH
#define F_PREVIOUS_HASH  GW_KEY_FIELD_PREVIOUS_HASH
#define F_LIMIT          GW_KEY_FIELD_LIMIT
#define F_PERMISSIONS    GW_KEY_FIELD_PERMISSIONS
#define F_COUNT          GW_KEY_FIELD_COUNT

#define D_CREATED        GW_DECISION_FIELD_CREATED
#define D_ROW            GW_DECISION_FIELD_ROW
#define D_IS_ADMIN       GW_DECISION_FIELD_IS_ADMIN
#define D_METHOD         GW_DECISION_FIELD_METHOD
#define D_CLIENT_ID      GW_DECISION_FIELD_CLIENT_ID
#define D_CLIENT_NAME    GW_DECISION_FIELD_CLIENT_NAME
#define D_LIMIT          GW_DECISION_FIELD_LIMIT
#define D_PERMISSIONS    GW_DECISION_FIELD_PERMISSIONS
#define D_COUNT          GW_DECISION_FIELD_COUNT

#if (F_LIMIT != F_COUNT - 2 || F_PERMISSIONS != F_COUNT - 1 || D_LIMIT != D_COUNT - 2 \
     || D_PERMISSIONS != D_COUNT - 1)
#error "the rate limit and the permissions must be a record's last fields (optional)"
#endif

#define NGX_HTTP_GATEWAY_HIT_MAX_FIELDS  16

typedef struct {
    u_char                        *data[NGX_HTTP_GATEWAY_HIT_MAX_FIELDS];
    size_t                         len[NGX_HTTP_GATEWAY_HIT_MAX_FIELDS];
} ngx_http_gateway_hit_fields_t;


static int ngx_http_gateway_hit_token_char(u_char c);
static size_t ngx_http_gateway_hit_split(u_char *value, size_t len,
    ngx_http_gateway_hit_fields_t *rec, size_t max);
static int ngx_http_gateway_hit_hash_is(u_char *hex, size_t len, const u_char *digest);
static int ngx_http_gateway_hit_is_boolean(u_char *data, size_t len);
static int ngx_http_gateway_hit_table_field(u_char **p, u_char *end, u_char **data,
    size_t *len);


/* RFC 9110's token characters. */
static int
ngx_http_gateway_hit_token_char(u_char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
           || (c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}


/*
 * HTTP/1's header block from the end of the request line to the end of what nginx parsed, as
 * nginx left it in its buffer, where it wrote a NUL over each name's colon and at each value's
 * end (over its CR, or its first trailing blank) of every line it kept: every line a token,
 * then the colon, then a value that is not empty and has no control byte but tab; at most
 * GW_MAX_HEADERS lines. The Lua screen (lua/gateway/request_check.lua) refuses a line without a
 * colon, a name that is not a token and control bytes, and counts lines: this passes less. An
 * empty value goes to Lua, and so does a line nginx dropped without a word (a name with other
 * bytes than letters, digits and `-`, such as `X.A`, `X_A` or `X!A`: nginx neither refuses it
 * nor writes its NULs, so its CR reads as a control byte here); Lua passes both, as nginx does.
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


/* 1 when the raw target's path (up to '?') is one the module may decide: no '%', no space, no
 * byte past ASCII, and no segment of dots only but "." and "..". Stricter than
 * lua/gateway/request_check.lua's bad_path (which decodes first): anything else is Lua's, which
 * refuses a dots-and-spaces segment or non-UTF-8 once decoded as BAD_PATH. */
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


/* `apk <id>.<secret>` in the only shape a key is issued in (lua/gateway/access.lua's
 * parse_api_key): "apk" in any case, spaces, an id of 1-15 digits not starting with 0, a dot,
 * 43 base64url characters, nothing after. */
int
ngx_http_gateway_hit_parse_api_key(u_char *p, size_t len, ngx_http_gateway_hit_str_t *id,
    u_char **secret)
{
    u_char  *end = p + len;

    if (len < 4 || (p[0] | 0x20) != 'a' || (p[1] | 0x20) != 'p' || (p[2] | 0x20) != 'k'
        || p[3] != ' ')
    {
        return 0;
    }
    for (p += 4; p < end && *p == ' '; p++) { /* void */ }
    id->data = p;
    if (p >= end || *p < '1' || *p > '9') {
        return 0;
    }
    while (p < end && *p >= '0' && *p <= '9') {
        p++;
    }
    id->len = p - id->data;
    if (id->len > NGX_HTTP_GATEWAY_HIT_ID_MAX_DIGITS || p >= end || *p != '.') {
        return 0;
    }
    *secret = ++p;
    if (end - p != NGX_HTTP_GATEWAY_HIT_SECRET_LEN) {
        return 0;
    }
    for ( /* void */ ; p < end; p++) {
        if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')
              || *p == '-' || *p == '_'))
        {
            return 0;
        }
    }
    return 1;
}


/* Unix time (s) in a field ("1764090000" or "1764090000.123"), truncated to the millisecond
 * (as nginx's ngx_atofp(data, len, 3) reads it); -1 when it is not one. */
double
ngx_http_gateway_hit_seconds(u_char *data, size_t len)
{
    intptr_t  value, cutoff, cutlim;
    size_t    point = 3;
    int       dot = 0;

    if (len == 0) {
        return -1;
    }
    cutoff = INTPTR_MAX / 10;
    cutlim = INTPTR_MAX % 10;
    for (value = 0; len--; data++) {
        if (*data == '.') {
            if (dot) {
                return -1;
            }
            dot = 1;
            continue;
        }
        if (*data < '0' || *data > '9') {
            return -1;
        }
        if (point == 0) {
            continue;
        }
        if (value >= cutoff && (value > cutoff || *data - '0' > cutlim)) {
            return -1;
        }
        value = value * 10 + (*data - '0');
        point -= dot;
    }
    while (point--) {
        if (value > cutoff) {
            return -1;
        }
        value = value * 10;
    }
    return value / 1000.0;
}


/* Splits a tab-separated value into at most `max` fields (the rest empty); the number found,
 * or 0 when there are more. */
static size_t
ngx_http_gateway_hit_split(u_char *value, size_t len, ngx_http_gateway_hit_fields_t *rec,
    size_t max)
{
    u_char  *p = value, *end = value + len;
    size_t   n = 0;

    memset(rec, 0, sizeof(ngx_http_gateway_hit_fields_t));
    for ( ;; ) {
        if (n == max) {
            return 0;
        }
        rec->data[n] = p;
        while (p < end && *p != '\t') {
            p++;
        }
        rec->len[n] = p - rec->data[n];
        n++;
        if (p == end) {
            return n;
        }
        p++;
    }
}


static int
ngx_http_gateway_hit_hex(u_char c)
{
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    c |= 0x20;
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    return -1;
}


/* Whether a hash in hex is the digest's: decoded first, then compared in constant time
 * (CRYPTO_memcmp, as the key table's raw hashes are), so the time taken says nothing of how
 * much of a guess was right. */
static int
ngx_http_gateway_hit_hash_is(u_char *hex, size_t len, const u_char *digest)
{
    u_char  hash[NGX_HTTP_GATEWAY_HIT_DIGEST_LEN];
    size_t  i;
    int     hi, lo;

    if (len != 2 * NGX_HTTP_GATEWAY_HIT_DIGEST_LEN) {
        return 0;
    }
    for (i = 0; i < NGX_HTTP_GATEWAY_HIT_DIGEST_LEN; i++) {
        hi = ngx_http_gateway_hit_hex(hex[2 * i]);
        lo = ngx_http_gateway_hit_hex(hex[2 * i + 1]);
        if (hi < 0 || lo < 0) {
            return 0;  /* not a hash: a damaged record */
        }
        hash[i] = (u_char) (hi << 4 | lo);
    }
    return CRYPTO_memcmp(hash, digest, NGX_HTTP_GATEWAY_HIT_DIGEST_LEN) == 0;
}


static int
ngx_http_gateway_hit_is_boolean(u_char *data, size_t len)
{
    return (len == 4 && memcmp(data, "true", 4) == 0)
           || (len == 5 && memcmp(data, "false", 5) == 0);
}


/* A client's rate limit, "<requests> <per_seconds>", as lua/gateway/ratelimit.lua's parse
 * reads it: 1-10 digits, a space, 1-5 digits, neither starting with 0, at most a day. */
int
ngx_http_gateway_hit_parse_limit(u_char *p, size_t len, long *requests, long *per)
{
    u_char  *end = p + len;

    if (p == end || *p < '1' || *p > '9') {
        return 0;
    }
    for (*requests = 0; p < end && *p >= '0' && *p <= '9'; p++) {
        if (*requests >= 1000000000L) {
            return 0;  /* an 11th digit */
        }
        *requests = *requests * 10 + (*p - '0');
    }
    if (p == end || *p != ' ') {
        return 0;
    }
    p++;
    if (p == end || *p < '1' || *p > '9') {
        return 0;
    }
    for (*per = 0; p < end && *p >= '0' && *p <= '9'; p++) {
        if (*per >= 10000) {
            return 0;  /* a 6th digit */
        }
        *per = *per * 10 + (*p - '0');
    }
    return p == end && *per <= GW_RATE_LIMIT_MAX_PER;
}


/* A rate limit window's key in the limits dict (lua/gateway/ratelimit.lua's window_key): its
 * length, or 0 when it does not fit in `size` bytes. */
size_t
ngx_http_gateway_hit_window_key(u_char *buf, size_t size, u_char *row, size_t row_len,
    long per, long index)
{
    u_char  digits[2][24];
    size_t  n[2], len, i;
    long    v[2];
    unsigned long  u;
    int     negative;

    v[0] = per;
    v[1] = index;
    for (i = 0; i < 2; i++) {
        negative = v[i] < 0;
        u = negative ? 0UL - (unsigned long) v[i] : (unsigned long) v[i];
        n[i] = sizeof(digits[i]);
        do {
            digits[i][--n[i]] = (u_char) ('0' + u % 10);
            u /= 10;
        } while (u != 0);
        if (negative) {
            digits[i][--n[i]] = '-';
        }
    }
    len = sizeof(GW_RATE_LIMIT_PREFIX) - 1 + row_len + 1 + (sizeof(digits[0]) - n[0]) + 1
          + (sizeof(digits[1]) - n[1]);
    if (len > size) {
        return 0;
    }
    len = sizeof(GW_RATE_LIMIT_PREFIX) - 1;
    memcpy(buf, GW_RATE_LIMIT_PREFIX, len);
    memcpy(buf + len, row, row_len);
    len += row_len;
    for (i = 0; i < 2; i++) {
        buf[len++] = ' ';
        memcpy(buf + len, digits[i] + n[i], sizeof(digits[i]) - n[i]);
        len += sizeof(digits[i]) - n[i];
    }
    return len;
}


/* An API key against its learnt record in the keys dict (lua/gateway/keys.lua's verdict
 * "pass"), all but the revocation markers, which the caller reads: a live "known" record not
 * past half its life, whose hash (or rotated-out hash, within its grace) is the digest of the
 * secret, for a client not past its expiry. */
int
ngx_http_gateway_hit_parse_key_record(u_char *buf, size_t len, ngx_http_gateway_hit_str_t *id,
    const u_char *digest, double now, long max_age_ms, ngx_http_gateway_hit_learnt_t *out)
{
    ngx_http_gateway_hit_fields_t  rec;
    ngx_http_gateway_hit_identity_t  *identity = &out->identity;
    double                         until;

    /* a record stored before rate limits has no limit field */
    if (len == 0 || ngx_http_gateway_hit_split(buf, len, &rec, F_COUNT) < F_LIMIT) {
        return 0;
    }
    if (rec.len[F_KIND] != 5 || memcmp(rec.data[F_KIND], "known", 5) != 0
        || rec.len[F_CLIENT_ID] == 0
        || !ngx_http_gateway_hit_is_boolean(rec.data[F_IS_ADMIN], rec.len[F_IS_ADMIN]))
    {
        return 0;  /* an unknown id, or a damaged record: Lua's */
    }
    out->created = ngx_http_gateway_hit_seconds(rec.data[F_CREATED], rec.len[F_CREATED]);
    if (out->created < 0) {
        return 0;
    }
    if (now - out->created >= max_age_ms / 2000.0) {
        return 0;  /* past half its life: Lua passes it and refreshes the record */
    }
    if (!ngx_http_gateway_hit_hash_is(rec.data[F_HASH], rec.len[F_HASH], digest)) {
        /* a rotated-out secret passes within its grace only */
        if (!ngx_http_gateway_hit_hash_is(rec.data[F_PREVIOUS_HASH], rec.len[F_PREVIOUS_HASH],
                                          digest))
        {
            return 0;
        }
        until = ngx_http_gateway_hit_seconds(rec.data[F_PREVIOUS_UNTIL],
                                             rec.len[F_PREVIOUS_UNTIL]);
        if (rec.len[F_PREVIOUS_UNTIL] == 0 || until < 0 || now >= until) {
            return 0;
        }
    }
    if (rec.len[F_EXPIRES_AT] != 0) {
        until = ngx_http_gateway_hit_seconds(rec.data[F_EXPIRES_AT], rec.len[F_EXPIRES_AT]);
        if (until < 0 || now >= until) {
            return 0;
        }
    }
    identity->client_id.data = rec.data[F_CLIENT_ID];
    identity->client_id.len = rec.len[F_CLIENT_ID];
    identity->client_name.data = rec.data[F_CLIENT_NAME];
    identity->client_name.len = rec.len[F_CLIENT_NAME];
    identity->is_admin.data = rec.data[F_IS_ADMIN];
    identity->is_admin.len = rec.len[F_IS_ADMIN];
    identity->limit.data = rec.data[F_LIMIT];
    identity->limit.len = rec.len[F_LIMIT];
    identity->rules.data = rec.data[F_PERMISSIONS];
    identity->rules.len = rec.len[F_PERMISSIONS];
    /* The key id is the client's row (lua/gateway/keys.lua). */
    identity->row = *id;
    identity->method.data = (u_char *) "apk";
    identity->method.len = 3;
    identity->counter = GW_KEY_HIT_COUNTER;
    return 1;
}


/* A length byte, then that many bytes of text at *p (before end): the text in data and len,
 * *p past it; 0 when it runs past the end. */
static int
ngx_http_gateway_hit_table_field(u_char **p, u_char *end, u_char **data, size_t *len)
{
    if (*p >= end || (size_t) (end - *p - 1) < (size_t) **p) {
        return 0;
    }
    *len = **p;
    *data = *p + 1;
    *p += 1 + *len;
    return 1;
}


/* An API key against its record in the key table (lua/gateway/key_table.lua's decode, then
 * lua/gateway/keys.lua's verdict "pass"): the bytes of common/contract.ts KEY_RECORD. A record
 * that is absent, damaged or does not pass is Lua's to refuse. */
int
ngx_http_gateway_hit_parse_key_table_record(u_char *buf, size_t len,
    ngx_http_gateway_hit_str_t *id, const u_char *digest, double now,
    ngx_http_gateway_hit_identity_t *out)
{
    u_char  *p, *end, *text, *hash, flags;
    size_t   text_len;
    double   until;
    int      right = 0;

    if (len < 2 || buf[0] != GW_KEY_RECORD_VERSION) {
        return 0;
    }
    flags = buf[1];
    if (flags & GW_KEY_RECORD_GONE) {
        return 0;  /* a deleted client: Lua refuses it */
    }
    p = buf + 2;
    end = buf + len;

    if (flags & GW_KEY_RECORD_KEY) {
        if (end - p < GW_KEY_RECORD_HASH_BYTES) {
            return 0;
        }
        right = CRYPTO_memcmp(p, digest, GW_KEY_RECORD_HASH_BYTES) == 0;
        p += GW_KEY_RECORD_HASH_BYTES;
    }
    if (flags & GW_KEY_RECORD_PREVIOUS) {
        /* a rotated-out secret passes within its grace only */
        if (end - p < GW_KEY_RECORD_HASH_BYTES) {
            return 0;
        }
        hash = p;
        p += GW_KEY_RECORD_HASH_BYTES;
        if (!ngx_http_gateway_hit_table_field(&p, end, &text, &text_len)) {
            return 0;
        }
        if (!right && CRYPTO_memcmp(hash, digest, GW_KEY_RECORD_HASH_BYTES) == 0) {
            until = ngx_http_gateway_hit_seconds(text, text_len);
            right = until >= 0 && now < until;
        }
    }
    if (!right) {
        return 0;
    }
    if (flags & GW_KEY_RECORD_EXPIRES) {
        if (!ngx_http_gateway_hit_table_field(&p, end, &text, &text_len)) {
            return 0;
        }
        until = ngx_http_gateway_hit_seconds(text, text_len);
        if (until < 0 || now >= until) {
            return 0;
        }
    }
    memset(out, 0, sizeof(ngx_http_gateway_hit_identity_t));
    if (flags & GW_KEY_RECORD_LIMIT) {
        if (!ngx_http_gateway_hit_table_field(&p, end, &out->limit.data, &out->limit.len)
            || out->limit.len == 0)
        {
            return 0;
        }
    }
    if (flags & GW_KEY_RECORD_RULES) {
        /* the rules' length as text, then the rules */
        if (!ngx_http_gateway_hit_table_field(&p, end, &text, &text_len)) {
            return 0;
        }
        until = ngx_http_gateway_hit_seconds(text, text_len);
        if (until < 1 || until != (double) (size_t) until || until > (double) (end - p)) {
            return 0;
        }
        out->rules.data = p;
        out->rules.len = (size_t) until;
        p += out->rules.len;
    }
    /* The key id is the client's row and its id; the rest of the record is its name. */
    out->client_id = *id;
    out->row = *id;
    out->client_name.data = p;
    out->client_name.len = end - p;
    if (flags & GW_KEY_RECORD_ADMIN) {
        out->is_admin.data = (u_char *) "true";
        out->is_admin.len = 4;
    } else {
        out->is_admin.data = (u_char *) "false";
        out->is_admin.len = 5;
    }
    out->method.data = (u_char *) "apk";
    out->method.len = 3;
    out->counter = GW_KEY_HIT_COUNTER;
    return 1;
}


/* A cached decision (lua/gateway/entry.lua's decode), undamaged: its identity, and when it was
 * decided (the caller reads the revocation markers). Its lifetime (never past a token's exp)
 * is the dict entry's own: an expired one reads as absent. */
int
ngx_http_gateway_hit_parse_decision(u_char *buf, size_t len, ngx_http_gateway_hit_learnt_t *out)
{
    ngx_http_gateway_hit_fields_t     rec;
    ngx_http_gateway_hit_identity_t  *identity = &out->identity;

    if (len == 0 || ngx_http_gateway_hit_split(buf, len, &rec, D_COUNT) < D_LIMIT) {
        return 0;
    }
    if (rec.len[D_ROW] == 0 || rec.len[D_METHOD] == 0
        || !ngx_http_gateway_hit_is_boolean(rec.data[D_IS_ADMIN], rec.len[D_IS_ADMIN]))
    {
        return 0;  /* a damaged entry: Lua's */
    }
    out->created = ngx_http_gateway_hit_seconds(rec.data[D_CREATED], rec.len[D_CREATED]);
    if (out->created < 0) {
        return 0;
    }
    identity->client_id.data = rec.data[D_CLIENT_ID];
    identity->client_id.len = rec.len[D_CLIENT_ID];
    identity->client_name.data = rec.data[D_CLIENT_NAME];
    identity->client_name.len = rec.len[D_CLIENT_NAME];
    identity->is_admin.data = rec.data[D_IS_ADMIN];
    identity->is_admin.len = rec.len[D_IS_ADMIN];
    identity->method.data = rec.data[D_METHOD];
    identity->method.len = rec.len[D_METHOD];
    identity->row.data = rec.data[D_ROW];
    identity->row.len = rec.len[D_ROW];
    identity->limit.data = rec.data[D_LIMIT];
    identity->limit.len = rec.len[D_LIMIT];
    identity->rules.data = rec.data[D_PERMISSIONS];
    identity->rules.len = rec.len[D_PERMISSIONS];
    identity->counter = GW_CACHE_HIT_COUNTER;
    return 1;
}


/*
 * A client's permissions (lua/gateway/permissions.lua, common/permissions.ts): 1 only when a
 * rule lets `method` through on the path decided from the raw `target` ($request_uri). A target
 * Lua would refuse as ambiguous, rules it would not parse, and anything this cannot hold (a path
 * past PATH_MAX bytes or SEGMENTS_MAX segments) are 0: Lua's, which refuses or passes it
 * itself. So the module passes only what Lua passes; the caller checks the absolute-form.
 */
#define NGX_HTTP_GATEWAY_HIT_PATH_MAX      4096
#define NGX_HTTP_GATEWAY_HIT_SEGMENTS_MAX  128

static const char *ngx_http_gateway_hit_rule_methods[] = GW_PERMISSION_METHODS;

int
ngx_http_gateway_hit_permits(const u_char *rules, size_t rules_len, const u_char *method,
    size_t method_len, const u_char *target, size_t target_len)
{
    u_char        path[NGX_HTTP_GATEWAY_HIT_PATH_MAX], c, lit;
    size_t        i, n = 0, plen = 0, nseg = 0, count, seen, seg_i, k;
    size_t        seg_at[NGX_HTTP_GATEWAY_HIT_SEGMENTS_MAX + 1];
    size_t        seg_len[NGX_HTTP_GATEWAY_HIT_SEGMENTS_MAX + 1];
    unsigned      bit = 0, mask;
    int           hi, lo, subtree, ok;
    const u_char *p, *end, *pat, *pat_end, *q;

    for (i = 0; i < sizeof(ngx_http_gateway_hit_rule_methods) / sizeof(char *); i++) {
        if (strlen(ngx_http_gateway_hit_rule_methods[i]) == method_len
            && memcmp(ngx_http_gateway_hit_rule_methods[i], method, method_len) == 0)
        {
            bit = 1u << i;
        }
    }
    if (bit == 0 || target_len == 0 || target[0] != '/') {
        return 0;
    }

    /* decidePath: the part before '?', decoded once; every refusal is Lua's */
    for (i = 0; i < target_len && target[i] != '?'; i++) {
        c = target[i];
        if (c <= 0x20 || c == 0x7f || c == '\\' || c == ';' || c == '#') {
            return 0;
        }
        if (c == '%') {
            if (i + 2 >= target_len) {
                return 0;
            }
            hi = ngx_http_gateway_hit_hex(target[i + 1]);
            lo = ngx_http_gateway_hit_hex(target[i + 2]);
            if (hi < 0 || lo < 0) {
                return 0;
            }
            c = (u_char) (hi << 4 | lo);
            if (c == '/' || c == '\\' || c == '.' || c == '%' || c < 0x20 || c == 0x7f) {
                return 0;
            }
            i += 2;
        }
        if (plen == sizeof(path)) {
            return 0;
        }
        path[plen++] = c;
    }

    /* its segments: no '.' or '..', no empty one but a trailing slash's */
    seg_at[0] = 1;
    for (i = 1; ; i++) {
        if (i == plen || path[i] == '/') {
            seg_len[nseg] = i - seg_at[nseg];
            if ((seg_len[nseg] == 1 && path[seg_at[nseg]] == '.')
                || (seg_len[nseg] == 2 && path[seg_at[nseg]] == '.'
                    && path[seg_at[nseg] + 1] == '.'))
            {
                return 0;
            }
            nseg++;
            if (i == plen) {
                break;
            }
            if (seg_len[nseg - 1] == 0 || nseg == NGX_HTTP_GATEWAY_HIT_SEGMENTS_MAX) {
                return 0;
            }
            seg_at[nseg] = i + 1;
        }
    }

    /* PERMISSIONS_TEXT: <n>, then per rule ' ', two hex digits, the pattern. Every rule is
     * read to the end, as Lua parses the whole text: rules it would not parse allow nothing. */
    p = rules;
    end = rules + rules_len;
    if (p == end || *p < '0' || *p > '9' || (*p == '0' && p + 1 < end && p[1] != ' ')) {
        return 0;
    }
    for (count = 0; p < end && *p >= '0' && *p <= '9'; p++) {
        count = count * 10 + (size_t) (*p - '0');
        if (count > 1000) {
            return 0;
        }
    }
    for (seen = 0; p < end; seen++) {
        if (*p != ' ' || end - p < 4) {
            return 0;
        }
        hi = ngx_http_gateway_hit_hex(p[1]);
        lo = ngx_http_gateway_hit_hex(p[2]);
        if (hi < 0 || lo < 0 || p[3] != '/') {
            return 0;
        }
        mask = (unsigned) (hi << 4 | lo);
        if (mask == 0) {
            return 0;
        }
        pat = p + 3;
        for (pat_end = pat; pat_end < end && *pat_end != ' '; pat_end++) { /* void */ }
        p = pat_end;

        /* "/" alone: the root only */
        if (pat_end - pat == 1) {
            if ((mask & bit) && nseg == 1 && seg_len[0] == 0) {
                n = 1;
            }
            continue;
        }

        /* the pattern's segments, each checked; compared while this rule can still match */
        ok = (mask & bit) != 0;
        subtree = 0;
        seg_i = 0;
        for (q = pat + 1; ; q++) {
            const u_char  *s = q;

            while (q < pat_end && *q != '/') {
                q++;
            }
            if (q == s) {
                return 0;  /* an empty segment: not PERMISSIONS_TEXT */
            }
            if (q - s == 2 && s[0] == '*' && s[1] == '*') {
                if (q != pat_end) {
                    return 0;
                }
                subtree = 1;
                break;
            }
            if (seg_i >= nseg) {
                ok = 0;
            }
            if (q - s == 1 && s[0] == '*') {
                ok = ok && seg_len[seg_i] != 0;
            } else {
                /* a literal, its bytes beyond ASCII as %XX */
                k = 0;
                while (s < q) {
                    lit = *s;
                    if (lit == '*') {
                        return 0;
                    }
                    if (lit == '%') {
                        if (q - s < 3) {
                            return 0;
                        }
                        hi = ngx_http_gateway_hit_hex(s[1]);
                        lo = ngx_http_gateway_hit_hex(s[2]);
                        if (hi < 0 || lo < 0) {
                            return 0;
                        }
                        lit = (u_char) (hi << 4 | lo);
                        s += 2;
                    }
                    if (ok && (k >= seg_len[seg_i] || path[seg_at[seg_i] + k] != lit)) {
                        ok = 0;
                    }
                    k++;
                    s++;
                }
                ok = ok && k == seg_len[seg_i];
            }
            seg_i++;
            if (q == pat_end) {
                break;
            }
        }
        if (ok && (subtree ? seg_i <= nseg : seg_i == nseg)) {
            n = 1;
        }
    }
    /* a rule set cut short or padded is not PERMISSIONS_TEXT: it allows nothing */
    return n == 1 && seen == count;
}
