/*
 * The gateway's nginx module's pure parts: functions of bytes and lengths,
 * without nginx's types or state, so that the module
 * (ngx_http_gateway_hit_module.c) and the fuzz harnesses (nginx-module/fuzz/)
 * call the same code; one file per fuzz target, named after it.
 * docs/decisions/20261125-hit-in-c.md.
 */
#ifndef NGX_HTTP_GATEWAY_HIT_PARSE_H
#define NGX_HTTP_GATEWAY_HIT_PARSE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A key record longer than this (a very long client name) is left to Lua. */
#define NGX_HTTP_GATEWAY_HIT_RECORD_BUFFER  2048
#define NGX_HTTP_GATEWAY_HIT_SECRET_LEN     43
#define NGX_HTTP_GATEWAY_HIT_DIGEST_LEN     32
/* A rate limit window's key: the prefix, a row (at most a key id's 15 digits or
 * a decision's row), the period and the window's index. */
#define NGX_HTTP_GATEWAY_HIT_WINDOW_KEY_LEN 96

/* Laid out as ngx_str_t. */
typedef struct {
    size_t                         len;
    u_char                        *data;
} ngx_http_gateway_hit_str_t;

/* Who a hit is: what the module sets in the identity variables, counts and
 * limits. */
typedef struct {
    ngx_http_gateway_hit_str_t     client_id;
    ngx_http_gateway_hit_str_t     client_name;
    ngx_http_gateway_hit_str_t     is_admin;     /* "true" or "false" */
    ngx_http_gateway_hit_str_t     method;       /* $client_auth_method */
    /* the client's row: the usage and limits keys */
    ngx_http_gateway_hit_str_t     row;
    /* "<requests> <per_seconds>", or empty */
    ngx_http_gateway_hit_str_t     limit;
    /* PERMISSIONS_TEXT, or empty: no rules */
    ngx_http_gateway_hit_str_t     rules;
    /* the metrics counter of this kind of hit */
    const char                    *counter;
} ngx_http_gateway_hit_identity_t;

/* A learnt key record (the keys dict), parsed: its identity, and when it was
 * learnt. */
typedef struct {
    ngx_http_gateway_hit_identity_t  identity;
    double                           created;
} ngx_http_gateway_hit_learnt_t;

/* One file per fuzz target (nginx-module/fuzz/):
 * ngx_http_gateway_hit_parse_screen.c */
int ngx_http_gateway_hit_screen_block(u_char *p, u_char *end);
int ngx_http_gateway_hit_screen_value(u_char *p, size_t len);

/* ngx_http_gateway_hit_parse_path.c */
int ngx_http_gateway_hit_plain_path(u_char *p, size_t len);

/* ngx_http_gateway_hit_parse_api_key.c */
int ngx_http_gateway_hit_parse_api_key(u_char *p, size_t len,
    ngx_http_gateway_hit_str_t *id, u_char **secret);

/* ngx_http_gateway_hit_parse_limit.c */
int ngx_http_gateway_hit_parse_limit(u_char *p, size_t len, long *requests,
    long *per);
size_t ngx_http_gateway_hit_window_key(u_char *buf, size_t size, u_char *row,
    size_t row_len, long per, long index);

/* ngx_http_gateway_hit_parse_records.c */
double ngx_http_gateway_hit_seconds(u_char *data, size_t len);
int ngx_http_gateway_hit_parse_key_record(u_char *buf, size_t len,
    ngx_http_gateway_hit_str_t *id, const u_char *digest, double now,
    long max_age_ms, ngx_http_gateway_hit_learnt_t *out);
int ngx_http_gateway_hit_parse_key_table_record(u_char *buf, size_t len,
    ngx_http_gateway_hit_str_t *id, const u_char *digest, double now,
    ngx_http_gateway_hit_identity_t *out);
int ngx_http_gateway_hit_parse_decision(u_char *buf, size_t len,
    ngx_http_gateway_hit_learnt_t *out);

/* ngx_http_gateway_hit_permissions.c (fuzzed in fuzz_records) */
int ngx_http_gateway_hit_permits(const u_char *rules, size_t rules_len,
    const u_char *method, size_t method_len, const u_char *target,
    size_t target_len);


/* A hex digit's value, or -1. */
static inline int
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

#endif
