/*
 * libFuzzer target: what the module reads from shared memory, as any bytes
 * could be there (a damaged or hostile record must be Lua's, never a read
 * outside it or a pass it does not earn): a learnt key record
 * (ngx_http_gateway_hit_parse_key_record), a key table record
 * (_parse_key_table_record), a cached decision (_parse_decision), and a
 * client's permissions against a request target (_permits). The input: a
 * selector byte, the secret's 32-byte digest, 4 bytes of "now" (s), then the
 * record.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gateway_contract.h"
#include "ngx_http_gateway_hit_parse.h"

#define HEAD  (1 + 32 + 4)

static int
within(const ngx_http_gateway_hit_str_t *s, const unsigned char *buf, size_t len)
{
    return s->len == 0 || (s->data >= buf && s->data + s->len <= buf + len);
}

static void
check_identity(const ngx_http_gateway_hit_identity_t *id, const unsigned char *buf, size_t len,
    const ngx_http_gateway_hit_str_t *key_id)
{
    if (!((id->is_admin.len == 4 && memcmp(id->is_admin.data, "true", 4) == 0)
          || (id->is_admin.len == 5 && memcmp(id->is_admin.data, "false", 5) == 0)))
    {
        abort();
    }
    if (id->counter == NULL || id->row.len == 0 || id->method.len == 0) {
        abort();
    }
    /* everything else points into the record (or is the key id) */
    if (!within(&id->client_name, buf, len) || !within(&id->limit, buf, len)
        || !within(&id->rules, buf, len))
    {
        abort();
    }
    if (!within(&id->client_id, buf, len) && id->client_id.data != key_id->data) {
        abort();
    }
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    unsigned char                    digest[32], *rec, id_text[] = "42";
    uint32_t                         now_s;
    size_t                           len;
    double                           now;
    ngx_http_gateway_hit_str_t       id = { 2, id_text };
    ngx_http_gateway_hit_learnt_t    learnt;
    ngx_http_gateway_hit_identity_t  identity;

    if (size < HEAD || size - HEAD > NGX_HTTP_GATEWAY_HIT_RECORD_BUFFER) {
        return 0;
    }
    memcpy(digest, data + 1, 32);
    memcpy(&now_s, data + 33, 4);
    now = now_s + 0.5;
    len = size - HEAD;
    rec = malloc(len ? len : 1);
    memcpy(rec, data + HEAD, len);

    switch (data[0] % 4) {
    case 3:
        /* permissions: the record is "<rules>\n<target>", the method the
         * digest's first byte's */
        {
            static const char  *methods[] = { "GET", "HEAD", "POST", "DELETE", "TRACE" };
            const char         *m = methods[digest[0] % 5];
            unsigned char      *nl = memchr(rec, '\n', len);
            size_t              rules_len = nl ? (size_t) (nl - rec) : len;
            int                 r;

            r = ngx_http_gateway_hit_permits(rec, rules_len, (const unsigned char *) m,
                                             strlen(m), nl ? nl + 1 : rec + len,
                                             nl ? len - rules_len - 1 : 0);
            if (r != 0 && r != 1) {
                abort();
            }
        }
        break;
    case 0:
        if (ngx_http_gateway_hit_parse_key_record(rec, len, &id, digest, now, 3600000,
                                                  &learnt))
        {
            check_identity(&learnt.identity, rec, len, &id);
            /* learnt before now, and less than half a life ago */
            if (!(learnt.created >= 0 && now - learnt.created < 1800)) {
                abort();
            }
            if (learnt.identity.row.data != id.data
                || strcmp(learnt.identity.counter, GW_KEY_HIT_COUNTER) != 0)
            {
                abort();
            }
        }
        break;
    case 1:
        if (ngx_http_gateway_hit_parse_key_table_record(rec, len, &id, digest, now,
                                                        &identity))
        {
            check_identity(&identity, rec, len, &id);
            /* a record that passes: this version, not gone, and one of its
             * hashes the digest */
            if (len < 2 || rec[0] != GW_KEY_RECORD_VERSION || (rec[1] & GW_KEY_RECORD_GONE)) {
                abort();
            }
            /* rules only with their flag */
            if (identity.rules.len != 0 && !(rec[1] & GW_KEY_RECORD_RULES)) {
                abort();
            }
            if (!(rec[1] & (GW_KEY_RECORD_KEY | GW_KEY_RECORD_PREVIOUS))) {
                abort();
            }
        }
        break;
    default:
        if (ngx_http_gateway_hit_parse_decision(rec, len, &learnt)) {
            check_identity(&learnt.identity, rec, len, &id);
            if (!within(&learnt.identity.row, rec, len)
                || !within(&learnt.identity.method, rec, len) || learnt.created < 0)
            {
                abort();
            }
        }
        break;
    }
    free(rec);
    return 0;
}
