/*
 * What the module reads from shared memory, judged from its bytes alone: a
 * learnt key record (lua/gateway/key_records.lua's), a key table record
 * (common/contract.ts KEY_RECORD, lua/gateway/key_table.lua's decode) and a
 * cached decision (lua/gateway/decision_entry.lua's). Each says 1 only when
 * the Lua code would pass the same; anything else is 0, and the request is
 * Lua's. Fuzzed as fuzz_records.
 */
#include <string.h>
#include <openssl/crypto.h>

#include "gateway_contract.h"
#include "ngx_http_gateway_hit_parse.h"


/* A learnt key record's and a cached decision's fields: their order is the
 * contract's (common/contract.ts LEARNT_KEY_FIELDS, DECISION_FIELDS), which
 * lua/gateway/key_records.lua and decision_entry.lua write (test/lua/cases hold
 * them to it).
 * The rate limit and the permissions are the last, optional: absent from a
 * record stored before limits, and for a client without rules. */
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

#if (F_LIMIT != F_COUNT - 2 || F_PERMISSIONS != F_COUNT - 1                  \
     || D_LIMIT != D_COUNT - 2 || D_PERMISSIONS != D_COUNT - 1)
#error "the rate limit and the permissions must be a record's last fields"
#endif

#define NGX_HTTP_GATEWAY_HIT_MAX_FIELDS  16

typedef struct {
    u_char                        *data[NGX_HTTP_GATEWAY_HIT_MAX_FIELDS];
    size_t                         len[NGX_HTTP_GATEWAY_HIT_MAX_FIELDS];
} ngx_http_gateway_hit_fields_t;


static int ngx_http_gateway_hit_table_secret(u_char **p, u_char *end,
    u_char flags, const u_char *digest, double now);
static int ngx_http_gateway_hit_table_unexpired(u_char **p, u_char *end,
    u_char flags, double now);
static int ngx_http_gateway_hit_table_rules(u_char **p, u_char *end,
    ngx_http_gateway_hit_str_t *rules);
static int ngx_http_gateway_hit_table_field(u_char **p, u_char *end,
    u_char **data, size_t *len);
static size_t ngx_http_gateway_hit_split(u_char *value, size_t len,
    ngx_http_gateway_hit_fields_t *rec, size_t max);
static int ngx_http_gateway_hit_hash_is(u_char *hex, size_t len,
    const u_char *digest);
static int ngx_http_gateway_hit_is_boolean(u_char *data, size_t len);


/* An API key against its learnt record in the keys dict
 * (lua/gateway/key_records.lua's verdict "pass"), all but the revocation
 * markers, which the caller reads: a
 * live "known" record not past half its life, whose hash (or rotated-out hash,
 * within its grace) is the digest of the secret, for a client not past its
 * expiry. */
int
ngx_http_gateway_hit_parse_key_record(u_char *buf, size_t len,
    ngx_http_gateway_hit_str_t *id, const u_char *digest, double now,
    long max_age_ms, ngx_http_gateway_hit_learnt_t *out)
{
    double                            until;
    ngx_http_gateway_hit_fields_t     rec;
    ngx_http_gateway_hit_identity_t  *identity = &out->identity;

    /* a record stored before rate limits has no limit field */
    if (len == 0
        || ngx_http_gateway_hit_split(buf, len, &rec, F_COUNT) < F_LIMIT)
    {
        return 0;
    }
    if (rec.len[F_KIND] != 5 || memcmp(rec.data[F_KIND], "known", 5) != 0
        || rec.len[F_CLIENT_ID] == 0
        || !ngx_http_gateway_hit_is_boolean(rec.data[F_IS_ADMIN],
                                            rec.len[F_IS_ADMIN]))
    {
        return 0;  /* an unknown id, or a damaged record: Lua's */
    }
    out->created = ngx_http_gateway_hit_seconds(rec.data[F_CREATED],
                                                rec.len[F_CREATED]);
    if (out->created < 0) {
        return 0;
    }
    if (now - out->created >= max_age_ms / 2000.0) {
        /* past half its life: Lua passes it and refreshes the record */
        return 0;
    }
    if (!ngx_http_gateway_hit_hash_is(rec.data[F_HASH], rec.len[F_HASH],
                                      digest))
    {
        /* a rotated-out secret passes within its grace only */
        if (!ngx_http_gateway_hit_hash_is(rec.data[F_PREVIOUS_HASH],
                                          rec.len[F_PREVIOUS_HASH], digest))
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
        until = ngx_http_gateway_hit_seconds(rec.data[F_EXPIRES_AT],
                                             rec.len[F_EXPIRES_AT]);
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
    /* The key id is the client's row (lua/gateway/key_records.lua). */
    identity->row = *id;
    identity->method.data = (u_char *) "apk";
    identity->method.len = 3;
    identity->counter = GW_KEY_HIT_COUNTER;
    return 1;
}


/* An API key against its record in the key table (lua/gateway/key_table.lua's
 * decode, then lua/gateway/key_records.lua's verdict "pass"): the bytes of
 * common/contract.ts KEY_RECORD, in its order: version, flags, the secret's
 * hashes, the expiry, the limit, the rules, the name. A record that is absent,
 * damaged or does not pass is Lua's to refuse. */
int
ngx_http_gateway_hit_parse_key_table_record(u_char *buf, size_t len,
    ngx_http_gateway_hit_str_t *id, const u_char *digest, double now,
    ngx_http_gateway_hit_identity_t *out)
{
    u_char  *p, *end, flags;

    if (len < 2 || buf[0] != GW_KEY_RECORD_VERSION) {
        return 0;
    }
    flags = buf[1];
    if (flags & GW_KEY_RECORD_GONE) {
        return 0;  /* a deleted client: Lua refuses it */
    }
    p = buf + 2;
    end = buf + len;

    if (!ngx_http_gateway_hit_table_secret(&p, end, flags, digest, now)
        || !ngx_http_gateway_hit_table_unexpired(&p, end, flags, now))
    {
        return 0;
    }

    memset(out, 0, sizeof(ngx_http_gateway_hit_identity_t));
    if (flags & GW_KEY_RECORD_LIMIT) {
        if (!ngx_http_gateway_hit_table_field(&p, end, &out->limit.data,
                                              &out->limit.len)
            || out->limit.len == 0)
        {
            return 0;
        }
    }
    if (flags & GW_KEY_RECORD_RULES) {
        if (!ngx_http_gateway_hit_table_rules(&p, end, &out->rules)) {
            return 0;
        }
    }
    /* The key id is the client's row and its id; the rest of the record is its
     * name. */
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


/* A cached decision (lua/gateway/decision_entry.lua's decode), undamaged: its
 * identity, and when it was decided (the caller reads the revocation
 * markers). Its
 * lifetime (never past a token's exp) is the dict entry's own: an expired one
 * reads as absent. */
int
ngx_http_gateway_hit_parse_decision(u_char *buf, size_t len,
    ngx_http_gateway_hit_learnt_t *out)
{
    ngx_http_gateway_hit_fields_t     rec;
    ngx_http_gateway_hit_identity_t  *identity = &out->identity;

    if (len == 0
        || ngx_http_gateway_hit_split(buf, len, &rec, D_COUNT) < D_LIMIT)
    {
        return 0;
    }
    if (rec.len[D_ROW] == 0 || rec.len[D_METHOD] == 0
        || !ngx_http_gateway_hit_is_boolean(rec.data[D_IS_ADMIN],
                                            rec.len[D_IS_ADMIN]))
    {
        return 0;  /* a damaged entry: Lua's */
    }
    out->created = ngx_http_gateway_hit_seconds(rec.data[D_CREATED],
                                                rec.len[D_CREATED]);
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


/* Unix time (s) in a field ("1764090000" or "1764090000.123"), truncated to the
 * millisecond (as nginx's ngx_atofp(data, len, 3) reads it); -1 when it is not
 * one. */
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


/* A key table record's hashes at *p: 1 when the secret's digest is its key's
 * hash, or its rotated-out key's within the grace that follows it; *p past
 * them. 0 when neither, or the bytes run out. */
static int
ngx_http_gateway_hit_table_secret(u_char **p, u_char *end, u_char flags,
    const u_char *digest, double now)
{
    u_char  *text, *hash;
    size_t   text_len;
    double   until;
    int      right = 0;

    if (flags & GW_KEY_RECORD_KEY) {
        if (end - *p < GW_KEY_RECORD_HASH_BYTES) {
            return 0;
        }
        right = CRYPTO_memcmp(*p, digest, GW_KEY_RECORD_HASH_BYTES) == 0;
        *p += GW_KEY_RECORD_HASH_BYTES;
    }
    if (flags & GW_KEY_RECORD_PREVIOUS) {
        /* a rotated-out secret passes within its grace only */
        if (end - *p < GW_KEY_RECORD_HASH_BYTES) {
            return 0;
        }
        hash = *p;
        *p += GW_KEY_RECORD_HASH_BYTES;
        if (!ngx_http_gateway_hit_table_field(p, end, &text, &text_len)) {
            return 0;
        }
        if (!right
            && CRYPTO_memcmp(hash, digest, GW_KEY_RECORD_HASH_BYTES) == 0)
        {
            until = ngx_http_gateway_hit_seconds(text, text_len);
            right = until >= 0 && now < until;
        }
    }
    return right;
}


/* A key table record's expiry at *p, if it has one: 1 when it is still ahead
 * (or there is none), *p past it. */
static int
ngx_http_gateway_hit_table_unexpired(u_char **p, u_char *end, u_char flags,
    double now)
{
    u_char  *text;
    size_t   text_len;
    double   until;

    if (!(flags & GW_KEY_RECORD_EXPIRES)) {
        return 1;
    }
    if (!ngx_http_gateway_hit_table_field(p, end, &text, &text_len)) {
        return 0;
    }
    until = ngx_http_gateway_hit_seconds(text, text_len);
    return until >= 0 && now < until;
}


/* A key table record's rules at *p: their length as text, then the rules (at
 * least one byte, within the record) into `rules`, *p past them. */
static int
ngx_http_gateway_hit_table_rules(u_char **p, u_char *end,
    ngx_http_gateway_hit_str_t *rules)
{
    u_char  *text;
    size_t   text_len;
    double   n;

    if (!ngx_http_gateway_hit_table_field(p, end, &text, &text_len)) {
        return 0;
    }
    n = ngx_http_gateway_hit_seconds(text, text_len);
    if (n < 1 || n != (double) (size_t) n || n > (double) (end - *p)) {
        return 0;
    }
    rules->data = *p;
    rules->len = (size_t) n;
    *p += rules->len;
    return 1;
}


/* A length byte, then that many bytes of text at *p (before end): the text in
 * data and len, *p past it; 0 when it runs past the end. */
static int
ngx_http_gateway_hit_table_field(u_char **p, u_char *end, u_char **data,
    size_t *len)
{
    if (*p >= end || (size_t) (end - *p - 1) < (size_t) **p) {
        return 0;
    }
    *len = **p;
    *data = *p + 1;
    *p += 1 + *len;
    return 1;
}


/* Splits a tab-separated value into at most `max` fields (the rest empty); the
 * number found, or 0 when there are more. */
static size_t
ngx_http_gateway_hit_split(u_char *value, size_t len,
    ngx_http_gateway_hit_fields_t *rec, size_t max)
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


/* Whether a hash in hex is the digest's: decoded first, then compared in
 * constant time (CRYPTO_memcmp, as the key table's raw hashes are), so the time
 * taken says nothing of how much of a guess was right. */
static int
ngx_http_gateway_hit_hash_is(u_char *hex, size_t len,
    const u_char *digest)
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


/* "true" or "false". */
static int
ngx_http_gateway_hit_is_boolean(u_char *data, size_t len)
{
    return (len == 4 && memcmp(data, "true", 4) == 0)
           || (len == 5 && memcmp(data, "false", 5) == 0);
}
