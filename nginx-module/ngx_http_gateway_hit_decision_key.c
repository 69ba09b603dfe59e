/*
 * The module's hashes, with OpenSSL's SHA-256: an API key's secret as its
 * record holds it (lua/gateway/sha256.lua), and the decision cache's keyed hash
 * of a credential (lua/gateway/decision_key.lua's key), whose key the Lua code
 * sets in the master.
 */
#include "ngx_http_gateway_hit_module.h"
/* The low-level SHA256_* calls: OpenSSL 3's one-shot SHA256() and EVP look the
 * algorithm up in their provider tables on every call, 4.5 µs per request here
 * (perf), more than the hash. */
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/sha.h>

#if (SHA256_DIGEST_LENGTH != NGX_HTTP_GATEWAY_HIT_DIGEST_LEN)
#error "a SHA-256 digest is NGX_HTTP_GATEWAY_HIT_DIGEST_LEN bytes"
#endif

/* The setter's name is the contract's (ngx_http_gateway_hit_module.h). */
#pragma GCC diagnostic error "-Wmissing-prototypes"


/* The decision cache's HMAC key, as SHA-256 states after the inner and the
 * outer padded key (RFC 2104): set by the Lua code in the master
 * (lua/gateway/decision_key.lua), new at every start, inherited by the workers.
 * Never in shared memory. */
static SHA256_CTX       ngx_http_gateway_hit_hmac_inner;
static SHA256_CTX       ngx_http_gateway_hit_hmac_outer;
ngx_flag_t              ngx_http_gateway_hit_hmac_ready;

/* lua-nginx-module's version as its Lua code said it with the key
 * (ngx.config.ngx_lua_version; 0: never said). The module calls that module's
 * private functions, declared by hand in ngx_http_gateway_hit_shdict.c: it runs
 * only with the version it was built and tested against
 * (GW_LUA_MODULE_VERSION). */
unsigned int            ngx_http_gateway_hit_lua_version;


/* An API key's secret as its record holds it: SHA-256 of its 43 characters. */
void
ngx_http_gateway_hit_digest(u_char *secret, u_char *digest)
{
    SHA256_CTX  sha;

    SHA256_Init(&sha);
    SHA256_Update(&sha, secret, NGX_HTTP_GATEWAY_HIT_SECRET_LEN);
    SHA256_Final(digest, &sha);
}


/* "d" and HMAC-SHA-256(credential NUL inputs) into `key` (1 + DIGEST_LEN
 * bytes), as lua/gateway/decision_key.lua's key(); the caller has checked that
 * the HMAC key is set. */
void
ngx_http_gateway_hit_decision_key(ngx_str_t *credential,
    ngx_http_variable_value_t *inputs, u_char *key)
{
    SHA256_CTX  sha;

    key[0] = 'd';
    sha = ngx_http_gateway_hit_hmac_inner;
    SHA256_Update(&sha, credential->data, credential->len);
    SHA256_Update(&sha, "", 1);
    SHA256_Update(&sha, inputs->data, inputs->len);
    SHA256_Final(key + 1, &sha);
    sha = ngx_http_gateway_hit_hmac_outer;
    SHA256_Update(&sha, key + 1, SHA256_DIGEST_LENGTH);
    SHA256_Final(key + 1, &sha);
}


/* Called by the Lua code in the master (init_by_lua) with the decision cache's
 * hashing key and lua-nginx-module's version: 1 when the module takes them, 0
 * when it is off for that version. */
int
ngx_http_gateway_hit_set_hmac_key(const u_char *key, size_t len,
    unsigned int lua_version)
{
    u_char  pad[64];
    size_t  i;

    ngx_http_gateway_hit_lua_version = lua_version;

    if (lua_version != GW_LUA_MODULE_VERSION || len > sizeof(pad)) {
        ngx_http_gateway_hit_hmac_ready = 0;
        return 0;
    }

    for (i = 0; i < sizeof(pad); i++) {
        pad[i] = (u_char) ((i < len ? key[i] : 0) ^ 0x36);
    }
    SHA256_Init(&ngx_http_gateway_hit_hmac_inner);
    SHA256_Update(&ngx_http_gateway_hit_hmac_inner, pad, sizeof(pad));

    for (i = 0; i < sizeof(pad); i++) {
        pad[i] = (u_char) ((i < len ? key[i] : 0) ^ 0x5c);
    }
    SHA256_Init(&ngx_http_gateway_hit_hmac_outer);
    SHA256_Update(&ngx_http_gateway_hit_hmac_outer, pad, sizeof(pad));

    ngx_explicit_memzero(pad, sizeof(pad));
    ngx_http_gateway_hit_hmac_ready = 1;
    return 1;
}
