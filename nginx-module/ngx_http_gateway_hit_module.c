/*
 * The gateway's nginx module: a seen API key's or token's hit decided in C, without entering
 * Lua's access phase. What it passes, its contract with the Lua code and how it is tested:
 * docs/decisions/20261125-hit-in-c.md (and 20261127-key-table-replica.md for the key table).
 *
 * After the configuration is read, lua-nginx-module's access handler is replaced in the phase
 * engine by ngx_http_gateway_hit_handler, which calls it unchanged unless the location says
 * `gateway_hit on;` and the request is plainly a hit. It never refuses: anything else, a doubt
 * included, goes to the Lua access code. The parsing and judging of bytes is in
 * ngx_http_gateway_hit_parse.c (pure, fuzzed); this file holds nginx's and the shared dicts'
 * side. Names come from gateway_contract.h, generated from common/contract.ts.
 */
#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
/* The low-level SHA256_* calls: OpenSSL 3's one-shot SHA256() and EVP look the algorithm up in
 * their provider tables on every call, 4.5 µs per request here (perf), more than the hash. */
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/sha.h>
#include <math.h>

#include "gateway_contract.h"
#include "ngx_http_gateway_hit_ids.h"
#include "ngx_http_gateway_hit_parse.h"
#include "ngx_http_gateway_hit_records.h"
#include "ngx_http_gateway_hit_usage.h"


/* lua-nginx-module's exported functions (resty/core/shdict.lua declares the same). */
ngx_shm_zone_t *ngx_http_lua_find_zone(u_char *name_data, size_t name_len);
int ngx_http_lua_ffi_shdict_get(void *zone, const unsigned char *key, size_t key_len,
    int *value_type, unsigned char **str_value_buf, size_t *str_value_len, double *num_value,
    int *user_flags, int get_stale, int *is_stale, char **errmsg);
int ngx_http_lua_ffi_shdict_incr(void *zone, const unsigned char *key, size_t key_len,
    double *value, char **err, int has_init, double init, long init_ttl, int *forcible);
ngx_int_t ngx_http_lua_access_handler(ngx_http_request_t *r);

/* lua-nginx-module's value types in a shared dict (Lua's): nil is what a missing key reads. */
#define NGX_HTTP_GATEWAY_HIT_TNIL     0
#define NGX_HTTP_GATEWAY_HIT_TNUMBER  3
#define NGX_HTTP_GATEWAY_HIT_TSTRING  4


typedef struct {
    ngx_flag_t                 enabled;
} ngx_http_gateway_hit_loc_conf_t;


enum {
    NGX_HTTP_GATEWAY_HIT_V_API_KEYS,
    NGX_HTTP_GATEWAY_HIT_V_MAX_AGE,
    NGX_HTTP_GATEWAY_HIT_V_INPUTS,
    NGX_HTTP_GATEWAY_HIT_V_CLIENT_ID,
    NGX_HTTP_GATEWAY_HIT_V_CLIENT_NAME,
    NGX_HTTP_GATEWAY_HIT_V_IS_ADMIN,
    NGX_HTTP_GATEWAY_HIT_V_METHOD,
    NGX_HTTP_GATEWAY_HIT_V_COUNT
};


/* Per configuration, not in statics: a worker respawned for the running configuration after a
 * reload failed must not see the indexes of the configuration that failed. */
typedef struct {
    /* whether any location said `gateway_hit on;`: without one no variable is looked up, so a
     * configuration that does not use the module needs none of them */
    ngx_flag_t                 used;
    ngx_int_t                  var_index[NGX_HTTP_GATEWAY_HIT_V_COUNT];
} ngx_http_gateway_hit_main_conf_t;


/* A request counted in a rate limit's window, and what its answer's headers will say. */
typedef struct {
    u_char                     key[NGX_HTTP_GATEWAY_HIT_WINDOW_KEY_LEN];
    size_t                     key_len;
    long                       requests;
    long                       per;
    long                       remaining;
    long                       reset;
} ngx_http_gateway_hit_admission_t;


static ngx_int_t ngx_http_gateway_hit_handler(ngx_http_request_t *r);
static ngx_flag_t ngx_http_gateway_hit_decide(ngx_http_request_t *r, ngx_flag_t *nobody);
static ngx_flag_t ngx_http_gateway_hit_clean_headers(ngx_http_request_t *r);
#if (NGX_HTTP_V2)
static ngx_flag_t ngx_http_gateway_hit_clean_decoded(ngx_http_request_t *r);
#endif
static ngx_flag_t ngx_http_gateway_hit_key_record(ngx_http_request_t *r, ngx_str_t *id,
    u_char *secret, ngx_int_t max_age_ms);
static ngx_flag_t ngx_http_gateway_hit_key_table_trusted(void);
static ngx_flag_t ngx_http_gateway_hit_no_client(ngx_str_t *id, double max_id);
static ngx_flag_t ngx_http_gateway_hit_key_table(ngx_http_request_t *r, ngx_str_t *id,
    u_char *secret, ngx_flag_t *nobody);
static void ngx_http_gateway_hit_copies_follow(double version);
static void ngx_http_gateway_hit_sweep(ngx_event_t *ev);
static ngx_flag_t ngx_http_gateway_hit_cached(ngx_http_request_t *r, ngx_str_t *credential);
static ngx_flag_t ngx_http_gateway_hit_use(ngx_http_request_t *r,
    ngx_http_gateway_hit_identity_t *identity);
static ngx_flag_t ngx_http_gateway_hit_admit(ngx_http_gateway_hit_identity_t *identity,
    ngx_http_gateway_hit_admission_t *a);
static ngx_flag_t ngx_http_gateway_hit_announce(ngx_http_request_t *r,
    ngx_http_gateway_hit_admission_t *a);
static ngx_table_elt_t *ngx_http_gateway_hit_add_header(ngx_http_request_t *r,
    const char *name, u_char *value, size_t len);
static ngx_http_variable_value_t *ngx_http_gateway_hit_variable(ngx_http_request_t *r,
    ngx_uint_t which);
static ngx_flag_t ngx_http_gateway_hit_set_variable(ngx_http_request_t *r, ngx_uint_t which,
    ngx_http_gateway_hit_str_t *value);
static ngx_int_t ngx_http_gateway_hit_read_number(ngx_shm_zone_t *zone, const u_char *key,
    size_t len, double *n);
static size_t ngx_http_gateway_hit_read_string(ngx_shm_zone_t *zone, u_char *key,
    size_t key_len, u_char *buf);
static double ngx_http_gateway_hit_add(ngx_shm_zone_t *zone, u_char *key, size_t len,
    double by, long ttl_ms);
static void ngx_http_gateway_hit_take_back(u_char *key, size_t len);
static double ngx_http_gateway_hit_marker(const u_char *key, size_t len);
static ngx_flag_t ngx_http_gateway_hit_alive(u_char *row, size_t len, double created);
static double ngx_http_gateway_hit_now(void);
static void ngx_http_gateway_hit_digest(u_char *secret, u_char *digest);

static void *ngx_http_gateway_hit_create_main_conf(ngx_conf_t *cf);
static void *ngx_http_gateway_hit_create_loc_conf(ngx_conf_t *cf);
static char *ngx_http_gateway_hit_merge_loc_conf(ngx_conf_t *cf, void *parent, void *child);
static ngx_int_t ngx_http_gateway_hit_init(ngx_conf_t *cf);
static ngx_int_t ngx_http_gateway_hit_init_module(ngx_cycle_t *cycle);
static ngx_int_t ngx_http_gateway_hit_init_process(ngx_cycle_t *cycle);
static void ngx_http_gateway_hit_exit_process(ngx_cycle_t *cycle);
static ngx_shm_zone_t *ngx_http_gateway_hit_find_zone(const char *name);


static ngx_command_t  ngx_http_gateway_hit_commands[] = {

    { ngx_string(GW_DIRECTIVE),
      NGX_HTTP_LOC_CONF|NGX_CONF_FLAG,
      ngx_conf_set_flag_slot,
      NGX_HTTP_LOC_CONF_OFFSET,
      offsetof(ngx_http_gateway_hit_loc_conf_t, enabled),
      NULL },

      ngx_null_command
};


static ngx_http_module_t  ngx_http_gateway_hit_module_ctx = {
    NULL,                                  /* preconfiguration */
    ngx_http_gateway_hit_init,             /* postconfiguration */

    ngx_http_gateway_hit_create_main_conf, /* create main configuration */
    NULL,                                  /* init main configuration */

    NULL,                                  /* create server configuration */
    NULL,                                  /* merge server configuration */

    ngx_http_gateway_hit_create_loc_conf,  /* create location configuration */
    ngx_http_gateway_hit_merge_loc_conf    /* merge location configuration */
};


ngx_module_t  ngx_http_gateway_hit_module = {
    NGX_MODULE_V1,
    &ngx_http_gateway_hit_module_ctx,      /* module context */
    ngx_http_gateway_hit_commands,         /* module directives */
    NGX_HTTP_MODULE,                       /* module type */
    NULL,                                  /* init master */
    ngx_http_gateway_hit_init_module,      /* init module */
    ngx_http_gateway_hit_init_process,     /* init process */
    NULL,                                  /* init thread */
    NULL,                                  /* exit thread */
    ngx_http_gateway_hit_exit_process,     /* exit process */
    NULL,                                  /* exit master */
    NGX_MODULE_V1_PADDING
};


static ngx_str_t  ngx_http_gateway_hit_var_names[NGX_HTTP_GATEWAY_HIT_V_COUNT] = {
    ngx_string(GW_API_KEYS_VARIABLE),
    ngx_string(GW_MAX_AGE_VARIABLE),
    ngx_string(GW_DECISION_INPUTS_VARIABLE),
    ngx_string(GW_CLIENT_ID_VARIABLE),
    ngx_string(GW_CLIENT_NAME_VARIABLE),
    ngx_string(GW_IS_ADMIN_VARIABLE),
    ngx_string(GW_METHOD_VARIABLE)
};

/* Found in each worker (lua-nginx-module looks in ngx_cycle, the new cycle only by then); the
 * key table's replica (lua/gateway/key_table.lua) is NULL when default.conf has none. */
static ngx_shm_zone_t  *ngx_http_gateway_hit_keys;
static ngx_shm_zone_t  *ngx_http_gateway_hit_revocations;
static ngx_shm_zone_t  *ngx_http_gateway_hit_limits;
static ngx_shm_zone_t  *ngx_http_gateway_hit_metrics;
static ngx_shm_zone_t  *ngx_http_gateway_hit_decisions;
static ngx_shm_zone_t  *ngx_http_gateway_hit_key_table_zone;

/* The sweep that copies the key table's records into this worker ahead of any request for them
 * (ngx_http_gateway_hit_sweep): its timer, the next id it reads, the copies' generation it is
 * sweeping for, and whether the copies are full. */
#define NGX_HTTP_GATEWAY_HIT_SWEEP_BATCH    256
#define NGX_HTTP_GATEWAY_HIT_SWEEP_GAP_MS   1
#define NGX_HTTP_GATEWAY_HIT_SWEEP_IDLE_MS  1000
/* Ids swept only while the largest is at most this many times the records held (ids come from
 * a sequence: gaps are deleted clients); a sparser table is copied by use alone. */
#define NGX_HTTP_GATEWAY_HIT_SWEEP_SPARSE   4

static ngx_event_t      ngx_http_gateway_hit_sweep_event;
/* What nginx's timer code reads as the event's connection (its debug log names ev->data's fd):
 * a stand-in whose fd is -1, as nginx's cache manager gives its own timer. */
static ngx_connection_t ngx_http_gateway_hit_sweep_dumb;
static uint64_t         ngx_http_gateway_hit_sweep_next;
static unsigned long    ngx_http_gateway_hit_sweep_generation;
static ngx_flag_t       ngx_http_gateway_hit_sweep_full;

/* The decision cache's HMAC key, as SHA-256 states after the inner and the outer padded key
 * (RFC 2104): set by the Lua code in the master (lua/gateway/keying.lua), new at every start,
 * inherited by the workers. Never in shared memory. */
static SHA256_CTX       ngx_http_gateway_hit_hmac_inner;
static SHA256_CTX       ngx_http_gateway_hit_hmac_outer;
static ngx_flag_t       ngx_http_gateway_hit_hmac_ready;

/* lua-nginx-module's version as its Lua code said it with the key (ngx.config.ngx_lua_version;
 * 0: never said). The module calls that module's private functions, declared by hand above: it
 * runs only with the version it was built and tested against (GW_LUA_MODULE_VERSION). */
static unsigned int     ngx_http_gateway_hit_lua_version;
static ngx_flag_t       ngx_http_gateway_hit_on;

/* A request's context when this module found its key id to be nobody's (GW_NOBODY_TELLER). */
static u_char           ngx_http_gateway_hit_nobody_mark;


static ngx_int_t
ngx_http_gateway_hit_handler(ngx_http_request_t *r)
{
    ngx_flag_t                        nobody;
    ngx_http_gateway_hit_loc_conf_t  *glcf;

    glcf = ngx_http_get_module_loc_conf(r, ngx_http_gateway_hit_module);

    /*
     * Once per request: lua-nginx-module resumes a paused access handler (ngx.sleep, a wait
     * on the sidecar) by running this phase's handler again. Deciding again then could pass
     * a request Lua has already answered (a 429 in its tarpit), and leave Lua's coroutine
     * unfinished. The context is cleared by an internal redirect, whose new location is
     * decided afresh, as Lua's own is.
     */
    if (glcf->enabled && ngx_http_get_module_ctx(r, ngx_http_gateway_hit_module) == NULL) {
        nobody = 0;
        if (ngx_http_gateway_hit_decide(r, &nobody)) {
            /* What Lua's handler returns when its code ends without ngx.exit (access
             * granted). */
            return NGX_OK;
        }

        /* Any non-NULL pointer: that the module has had its turn, and what it found for the
         * Lua code to refuse (GW_NOBODY_TELLER). */
        if (nobody) {
            ngx_http_set_ctx(r, &ngx_http_gateway_hit_nobody_mark, ngx_http_gateway_hit_module);

        } else {
            ngx_http_set_ctx(r, &ngx_http_gateway_hit_module, ngx_http_gateway_hit_module);
        }
    }

    return ngx_http_lua_access_handler(r);
}


/* 1: a hit, decided and used (variables set, counted); 0: the Lua code decides, told by
 * *nobody = 1 that the key id is nobody's (the rest of the request screened as Lua's
 * request_check screens it, or stricter: refusing it as nobody's is all that is left). */
static ngx_flag_t
ngx_http_gateway_hit_decide(ngx_http_request_t *r, ngx_flag_t *nobody)
{
    u_char                     *secret;
    ngx_int_t                   max_age_ms;
    ngx_str_t                   id, *credential;
    ngx_flag_t                  api_keys, is_key;
    ngx_http_variable_value_t  *v;
    ngx_http_gateway_hit_str_t  key_id;

    if (r != r->main || ngx_http_gateway_hit_revocations == NULL) {
        return 0;
    }

    if (!(r->method & GW_ALLOWED_METHODS)) {
        return 0;
    }

    if (!ngx_http_gateway_hit_clean_headers(r)) {
        return 0;
    }

    /* A path Lua's request_check might refuse (BAD_PATH) is Lua's, before any nobody. */
    if (!ngx_http_gateway_hit_plain_path(r->unparsed_uri.data, r->unparsed_uri.len)) {
        return 0;
    }

    if (r->headers_in.authorization == NULL) {
        return 0;
    }

    credential = &r->headers_in.authorization->value;
    secret = NULL;
    key_id.len = 0;
    key_id.data = NULL;
    v = ngx_http_gateway_hit_variable(r, NGX_HTTP_GATEWAY_HIT_V_API_KEYS);
    api_keys = v != NULL && v->len == 4 && ngx_strncmp(v->data, "true", 4) == 0;
    is_key = api_keys
             && ngx_http_gateway_hit_parse_api_key(credential->data, credential->len, &key_id,
                                                   &secret);
    id.data = key_id.data;
    id.len = key_id.len;

    /* As the Lua code: an API key in the issued shape is decided by its record in the trusted
     * key table (absent there: Lua's), else by its learnt key record alone (a record that does
     * not pass it is Lua's to refuse or ask about); anything else by the decision cache. */
    if (is_key && ngx_http_gateway_hit_key_table_trusted()) {
        return ngx_http_gateway_hit_key_table(r, &id, secret, nobody);
    }

    v = ngx_http_gateway_hit_variable(r, NGX_HTTP_GATEWAY_HIT_V_MAX_AGE);
    max_age_ms = v == NULL ? NGX_ERROR : ngx_atoi(v->data, v->len);
    if (max_age_ms == NGX_ERROR || max_age_ms <= 0) {
        return 0;
    }

    if (is_key) {
        return ngx_http_gateway_hit_key_record(r, &id, secret, max_age_ms);
    }

    return ngx_http_gateway_hit_cached(r, credential);
}


/* The request's headers, screened as lua/gateway/request_check.lua screens them or stricter:
 * HTTP/1's raw block (ngx_http_gateway_hit_screen_block), HTTP/2's decoded headers (HPACK has
 * no lines to screen: at most GW_MAX_HEADERS, no control byte but tab in a value; a field whose
 * name nginx does not take, `x.a`, `x_a`, `x(a` or a byte over 0x7f, it dropped without a word,
 * and a name with upper case it refused). A block in nginx's large header buffers, and any
 * other version, is Lua's. */
static ngx_flag_t
ngx_http_gateway_hit_clean_headers(ngx_http_request_t *r)
{
    ngx_buf_t  *b;

    if (r->http_version == NGX_HTTP_VERSION_10 || r->http_version == NGX_HTTP_VERSION_11) {
        b = r->header_in;
        if (b == NULL || r->request_line.data < b->start || r->request_line.data >= b->pos
            || b->pos > b->last)
        {
            return 0;
        }

        return ngx_http_gateway_hit_screen_block(r->request_line.data + r->request_line.len,
                                                 b->pos);
    }

#if (NGX_HTTP_V2)
    if (r->http_version == NGX_HTTP_VERSION_20) {
        return ngx_http_gateway_hit_clean_decoded(r);
    }
#endif

    return 0;
}


#if (NGX_HTTP_V2)

static ngx_flag_t
ngx_http_gateway_hit_clean_decoded(ngx_http_request_t *r)
{
    ngx_uint_t        i, n;
    ngx_list_part_t  *part;
    ngx_table_elt_t  *h;

    part = &r->headers_in.headers.part;
    h = part->elts;
    n = 0;

    for (i = 0; /* void */; i++) {
        if (i >= part->nelts) {
            if (part->next == NULL) {
                return 1;
            }
            part = part->next;
            h = part->elts;
            i = 0;
        }

        if (++n > GW_MAX_HEADERS
            || !ngx_http_gateway_hit_screen_value(h[i].value.data, h[i].value.len))
        {
            return 0;
        }
    }
}

#endif


/* An API key against its learnt key record in the keys dict (lua/gateway/keys.lua's verdict
 * "pass"). */
static ngx_flag_t
ngx_http_gateway_hit_key_record(ngx_http_request_t *r, ngx_str_t *id, u_char *secret,
    ngx_int_t max_age_ms)
{
    u_char                         buf[NGX_HTTP_GATEWAY_HIT_RECORD_BUFFER];
    u_char                         digest[SHA256_DIGEST_LENGTH];
    size_t                         len;
    ngx_http_gateway_hit_str_t     key_id;
    ngx_http_gateway_hit_learnt_t  learnt;

    if (ngx_http_gateway_hit_keys == NULL) {
        return 0;
    }

    len = ngx_http_gateway_hit_read_string(ngx_http_gateway_hit_keys, id->data, id->len, buf);
    if (len == 0) {
        return 0;
    }

    ngx_http_gateway_hit_digest(secret, digest);
    key_id.data = id->data;
    key_id.len = id->len;

    if (!ngx_http_gateway_hit_parse_key_record(buf, len, &key_id, digest,
                                               ngx_http_gateway_hit_now(), max_age_ms,
                                               &learnt))
    {
        return 0;
    }

    if (!ngx_http_gateway_hit_alive(id->data, id->len, learnt.created)) {
        return 0;  /* revoked since it was learnt */
    }

    return ngx_http_gateway_hit_use(r, &learnt.identity);
}


/* Whether the key table's replica is trusted now (lua/gateway/key_table.lua's lookup): loaded
 * whole, and its sidecar said the feed was live within key_table.trust_s. */
static ngx_flag_t
ngx_http_gateway_hit_key_table_trusted(void)
{
    double  until = 0;

    return ngx_http_gateway_hit_key_table_zone != NULL
           && ngx_http_gateway_hit_read_number(ngx_http_gateway_hit_key_table_zone,
                                               (u_char *) GW_KEY_TABLE_TRUSTED_UNTIL,
                                               sizeof(GW_KEY_TABLE_TRUSTED_UNTIL) - 1, &until)
              == NGX_OK
           && ngx_http_gateway_hit_now() < until;
}


/* Whether key id `id`, which the trusted key table does not hold, is nobody's, as
 * lua/gateway/key_table.lua's nobody() says (read now, not once a tick): the sidecar said the
 * feed was live within key_table's live seconds (no notice pending), the table has held every
 * record it was sent, and the id is not within the new-id band of the largest held `max_id`,
 * below or above (maybe a client created on another pair a moment ago). */
static ngx_flag_t
ngx_http_gateway_hit_no_client(ngx_str_t *id, double max_id)
{
    double  live_until, full, n;

    if (ngx_http_gateway_hit_read_number(ngx_http_gateway_hit_key_table_zone,
                                         (u_char *) GW_KEY_TABLE_LIVE_UNTIL,
                                         sizeof(GW_KEY_TABLE_LIVE_UNTIL) - 1, &live_until)
            != NGX_OK
        || ngx_http_gateway_hit_now() >= live_until)
    {
        return 0;
    }

    /* Full is `true` when present: anything but absent is a table that may lack a client. */
    if (ngx_http_gateway_hit_read_number(ngx_http_gateway_hit_key_table_zone,
                                         (u_char *) GW_KEY_TABLE_FULL,
                                         sizeof(GW_KEY_TABLE_FULL) - 1, &full)
        != NGX_DECLINED)
    {
        return 0;
    }

    n = (double) ngx_http_gateway_hit_id_number(id->data, id->len);

    /* Ids near the largest held may be a client whose creation committed a moment ago: below
     * it, out of id order beside other creators; above it, ahead of its notice (a bulk import
     * as much as one creation). Asked about, never refused. */
    return n + GW_KEY_TABLE_NEW_ID_BAND < max_id || n > max_id + GW_KEY_TABLE_NEW_ID_REACH;
}


/* An API key against its record in the key table (ngx_http_gateway_hit_parse_key_table_record):
 * a record that is absent, damaged or does not pass is Lua's to refuse; *nobody = 1 for an id
 * the table does not hold and nobody has (ngx_http_gateway_hit_no_client). */
static ngx_flag_t
ngx_http_gateway_hit_key_table(ngx_http_request_t *r, ngx_str_t *id, u_char *secret,
    ngx_flag_t *nobody)
{
    u_char                           buf[NGX_HTTP_GATEWAY_HIT_RECORD_BUFFER];
    u_char                           digest[SHA256_DIGEST_LENGTH];
    u_char                          *rec;
    size_t                           len;
    double                           version, max_id, probe;
    ngx_int_t                        versioned;
    ngx_http_gateway_hit_str_t       key_id;
    ngx_http_gateway_hit_identity_t  identity;

    /* This worker's copy of the record while the table has not changed since it was made;
     * else the shared dict's, copied for the next request. */
    versioned = ngx_http_gateway_hit_read_number(ngx_http_gateway_hit_key_table_zone,
                                                 (u_char *) GW_KEY_TABLE_VERSION,
                                                 sizeof(GW_KEY_TABLE_VERSION) - 1, &version);
    if (versioned != NGX_OK) {
        ngx_http_gateway_hit_records_forget();
    } else {
        ngx_http_gateway_hit_copies_follow(version);
    }

    if (versioned != NGX_OK
        || !ngx_http_gateway_hit_records_find(id->data, id->len, version,
                                              (const u_char **) &rec, &len))
    {
        /* An id above the largest one held is not held: not searched for (what a flood of
         * guessed ids would cost every request). A table without a largest id is Lua's. */
        if (ngx_http_gateway_hit_read_number(ngx_http_gateway_hit_key_table_zone,
                                             (u_char *) GW_KEY_TABLE_MAX_ID,
                                             sizeof(GW_KEY_TABLE_MAX_ID) - 1, &max_id)
            != NGX_OK)
        {
            return 0;
        }

        if ((double) ngx_http_gateway_hit_id_number(id->data, id->len) > max_id) {
            *nobody = ngx_http_gateway_hit_no_client(id, max_id);
            return 0;
        }

        len = ngx_http_gateway_hit_read_string(ngx_http_gateway_hit_key_table_zone, id->data,
                                               id->len, buf);
        if (len == 0) {
            /* Nothing read: absent, or a value this buffer cannot hold (a large record: then
             * Lua's). Only an absence asks whether the id is nobody's. */
            *nobody = ngx_http_gateway_hit_read_number(ngx_http_gateway_hit_key_table_zone,
                                                       id->data, id->len, &probe)
                          == NGX_DECLINED
                      && ngx_http_gateway_hit_no_client(id, max_id);
            return 0;
        }

        if (versioned == NGX_OK) {
            (void) ngx_http_gateway_hit_records_keep(id->data, id->len, version, buf, len);
        }

        rec = buf;
    }

    ngx_http_gateway_hit_digest(secret, digest);
    key_id.data = id->data;
    key_id.len = id->len;

    if (!ngx_http_gateway_hit_parse_key_table_record(rec, len, &key_id, digest,
                                               ngx_http_gateway_hit_now(), &identity))
    {
        return 0;
    }

    return ngx_http_gateway_hit_use(r, &identity);
}


/* Brings this worker's copies of records to the key table's `version`: through the ids each
 * version since theirs changed (the `#changed:` slots lua/gateway/key_table.lua writes after
 * moving the version on), or, when that cannot be told (a load, more versions than the slots,
 * a slot reused or not written yet, a change of more ids than a slot holds), by dropping them
 * all. One comparison while nothing changed. */
static void
ngx_http_gateway_hit_copies_follow(double version)
{
    u_char   key[sizeof(GW_KEY_TABLE_CHANGED_PREFIX) + NGX_INT64_LEN];
    u_char   buf[NGX_HTTP_GATEWAY_HIT_RECORD_BUFFER];
    u_char  *last;
    size_t   len;
    double   at, next;

    if (ngx_http_gateway_hit_records_version(&at)) {
        if (at == version) {
            return;
        }

    } else {
        at = version + 1;  /* none: started below */
    }

    if (version < at || version - at > GW_KEY_TABLE_CHANGED_SLOTS) {
        ngx_http_gateway_hit_records_start(version);
        return;
    }

    for (next = at + 1; next <= version; next++) {
        last = ngx_sprintf(key, GW_KEY_TABLE_CHANGED_PREFIX "%uL",
                           (uint64_t) next % GW_KEY_TABLE_CHANGED_SLOTS);
        len = ngx_http_gateway_hit_read_string(ngx_http_gateway_hit_key_table_zone, key,
                                               last - key, buf);
        if (len == 0 || !ngx_http_gateway_hit_records_follow(buf, len, next)) {
            ngx_http_gateway_hit_records_start(version);
            return;
        }
    }
}


/* Every second, and every millisecond while it has ids left: copies up to SWEEP_BATCH records
 * of the trusted key table, in id order, into this worker's copies, so that after a load (a
 * start, 10⁶ clients) a request finds its record in the worker's own memory instead of walking
 * the dict's tree (docs/decisions/20261129-worker-copies-kept.md). It starts again from the
 * first id whenever the copies are all dropped, and goes on to ids added since; it stops while
 * the copies are full. Counted as `module_copied`. */
static void
ngx_http_gateway_hit_sweep(ngx_event_t *ev)
{
    u_char         id[NGX_INT64_LEN];
    u_char         buf[NGX_HTTP_GATEWAY_HIT_RECORD_BUFFER];
    const u_char  *rec;
    size_t         id_len, len;
    double         version, max_id, records;
    ngx_int_t      kept;
    ngx_uint_t     n, copied;
    ngx_msec_t     delay;

    if (ngx_exiting || ngx_quit || ngx_terminate) {
        return;
    }

    delay = NGX_HTTP_GATEWAY_HIT_SWEEP_IDLE_MS;

    if (ngx_http_gateway_hit_key_table_trusted()
        && ngx_http_gateway_hit_read_number(ngx_http_gateway_hit_key_table_zone,
                                            (u_char *) GW_KEY_TABLE_VERSION,
                                            sizeof(GW_KEY_TABLE_VERSION) - 1, &version)
           == NGX_OK
        && ngx_http_gateway_hit_read_number(ngx_http_gateway_hit_key_table_zone,
                                            (u_char *) GW_KEY_TABLE_MAX_ID,
                                            sizeof(GW_KEY_TABLE_MAX_ID) - 1, &max_id)
           == NGX_OK
        && ngx_http_gateway_hit_read_number(ngx_http_gateway_hit_key_table_zone,
                                            (u_char *) GW_KEY_TABLE_RECORDS,
                                            sizeof(GW_KEY_TABLE_RECORDS) - 1, &records)
           == NGX_OK
        && max_id <= NGX_HTTP_GATEWAY_HIT_SWEEP_SPARSE * records)
    {
        ngx_http_gateway_hit_copies_follow(version);

        if (ngx_http_gateway_hit_records_generation()
            != ngx_http_gateway_hit_sweep_generation)
        {
            ngx_http_gateway_hit_sweep_generation = ngx_http_gateway_hit_records_generation();
            ngx_http_gateway_hit_sweep_next = 1;
            ngx_http_gateway_hit_sweep_full = 0;
        }

        copied = 0;

        for (n = 0;
             n < NGX_HTTP_GATEWAY_HIT_SWEEP_BATCH && !ngx_http_gateway_hit_sweep_full
             && (double) ngx_http_gateway_hit_sweep_next <= max_id;
             n++, ngx_http_gateway_hit_sweep_next++)
        {
            id_len = ngx_sprintf(id, "%uL", ngx_http_gateway_hit_sweep_next) - id;

            if (ngx_http_gateway_hit_records_find(id, id_len, version, &rec, &len)) {
                continue;
            }

            len = ngx_http_gateway_hit_read_string(ngx_http_gateway_hit_key_table_zone, id,
                                                   id_len, buf);
            if (len == 0) {
                continue;  /* no such id (a deleted client), or a record over the buffer */
            }

            kept = ngx_http_gateway_hit_records_keep(id, id_len, version, buf, len);
            if (kept < 0) {
                ngx_http_gateway_hit_sweep_full = 1;
                ngx_log_error(NGX_LOG_NOTICE, ev->log, 0,
                              GW_DIRECTIVE ": this worker's copies of the key table are full "
                              "at id %uL of %.0f: the rest are read from the table",
                              ngx_http_gateway_hit_sweep_next, max_id);
                break;
            }
            copied += (ngx_uint_t) kept;
        }

        if (copied != 0) {
            (void) ngx_http_gateway_hit_add(ngx_http_gateway_hit_metrics,
                                            (u_char *) GW_MODULE_COPIED_COUNTER,
                                            sizeof(GW_MODULE_COPIED_COUNTER) - 1,
                                            (double) copied, 0);
        }

        if (!ngx_http_gateway_hit_sweep_full
            && (double) ngx_http_gateway_hit_sweep_next <= max_id)
        {
            delay = NGX_HTTP_GATEWAY_HIT_SWEEP_GAP_MS;
        }
    }

    ngx_add_timer(ev, delay);
}


/* Any other credential against the decision cache (lua/gateway/cache.lua's get). */
static ngx_flag_t
ngx_http_gateway_hit_cached(ngx_http_request_t *r, ngx_str_t *credential)
{
    u_char                         buf[NGX_HTTP_GATEWAY_HIT_RECORD_BUFFER];
    u_char                         key[1 + SHA256_DIGEST_LENGTH];
    size_t                         len;
    SHA256_CTX                     sha;
    ngx_http_variable_value_t     *inputs;
    ngx_http_gateway_hit_learnt_t  learnt;

    if (!ngx_http_gateway_hit_hmac_ready || ngx_http_gateway_hit_decisions == NULL) {
        return 0;
    }

    inputs = ngx_http_gateway_hit_variable(r, NGX_HTTP_GATEWAY_HIT_V_INPUTS);
    if (inputs == NULL) {
        return 0;
    }

    /* "d" and HMAC-SHA-256(credential NUL inputs), as lua/gateway/keying.lua's key() */
    key[0] = 'd';
    sha = ngx_http_gateway_hit_hmac_inner;
    SHA256_Update(&sha, credential->data, credential->len);
    SHA256_Update(&sha, "", 1);
    SHA256_Update(&sha, inputs->data, inputs->len);
    SHA256_Final(key + 1, &sha);
    sha = ngx_http_gateway_hit_hmac_outer;
    SHA256_Update(&sha, key + 1, SHA256_DIGEST_LENGTH);
    SHA256_Final(key + 1, &sha);

    len = ngx_http_gateway_hit_read_string(ngx_http_gateway_hit_decisions, key, sizeof(key),
                                           buf);
    if (!ngx_http_gateway_hit_parse_decision(buf, len, &learnt)
        || !ngx_http_gateway_hit_alive(learnt.identity.row.data, learnt.identity.row.len,
                                       learnt.created))
    {
        return 0;
    }

    return ngx_http_gateway_hit_use(r, &learnt.identity);
}


/* The request into the client's rate limit if it has one (0: it does not fit, Lua's), the
 * identity into the variables, the request into the client's usage and the counters. */
static ngx_flag_t
ngx_http_gateway_hit_use(ngx_http_request_t *r, ngx_http_gateway_hit_identity_t *identity)
{
    u_char                            key[64], *last;
    ngx_str_t                         row;
    ngx_flag_t                        limited;
    ngx_http_gateway_hit_admission_t  a;

    /* A client with permissions passes only a request its rules allow, on an origin-form
     * target (an absolute-form one's path alone is in unparsed_uri); any other is Lua's, which
     * refuses it (docs/decisions/20261128-permissions.md). */
    if (identity->rules.len != 0
        && (r->request_line.len <= r->method_name.len + 1
            || r->request_line.data[r->method_name.len + 1] != '/'
            || !ngx_http_gateway_hit_permits(identity->rules.data, identity->rules.len,
                                             r->method_name.data, r->method_name.len,
                                             r->unparsed_uri.data, r->unparsed_uri.len)))
    {
        return 0;
    }

    limited = identity->limit.len != 0;

    if (limited && !ngx_http_gateway_hit_admit(identity, &a)) {
        return 0;
    }

    if (!ngx_http_gateway_hit_set_variable(r, NGX_HTTP_GATEWAY_HIT_V_CLIENT_ID,
                                           &identity->client_id)
        || !ngx_http_gateway_hit_set_variable(r, NGX_HTTP_GATEWAY_HIT_V_CLIENT_NAME,
                                              &identity->client_name)
        || !ngx_http_gateway_hit_set_variable(r, NGX_HTTP_GATEWAY_HIT_V_IS_ADMIN,
                                              &identity->is_admin)
        || !ngx_http_gateway_hit_set_variable(r, NGX_HTTP_GATEWAY_HIT_V_METHOD,
                                              &identity->method)
        || (limited && !ngx_http_gateway_hit_announce(r, &a)))
    {
        if (limited) {
            /* Lua counts it when it passes it */
            ngx_http_gateway_hit_take_back(a.key, a.key_len);
        }
        return 0;
    }

    /* Counted in this worker's memory and handed to Lua once a second; a row it cannot count
     * (not digits, no memory) straight into the dict, as a number Lua's drain reads too. */
    if (ngx_http_gateway_hit_usage_count(identity->row.data, identity->row.len) != 0) {
        row.data = identity->row.data;
        row.len = identity->row.len;
        last = ngx_snprintf(key, sizeof(key), GW_USAGE_ALLOWED_PREFIX "%T %V",
                            ngx_time() / GW_USAGE_GENERATION_S, &row);
        ngx_http_gateway_hit_add(ngx_http_gateway_hit_limits, key, last - key, 1,
                                 GW_USAGE_KEEP_S * 1000L);
    }
    ngx_http_gateway_hit_add(ngx_http_gateway_hit_metrics, (u_char *) identity->counter,
                             ngx_strlen(identity->counter), 1, 0);
    ngx_http_gateway_hit_add(ngx_http_gateway_hit_metrics, (u_char *) GW_MODULE_HIT_COUNTER,
                             sizeof(GW_MODULE_HIT_COUNTER) - 1, 1, 0);
    return 1;
}


/* lua/gateway/ratelimit.lua's admit, for a request the module would pass: 1 when it fits in
 * the sliding window (counted); 0 when it does not, or when anything cannot be told (then it
 * is not counted, and the Lua code decides: it counts it itself, or answers 429). */
static ngx_flag_t
ngx_http_gateway_hit_admit(ngx_http_gateway_hit_identity_t *identity,
    ngx_http_gateway_hit_admission_t *a)
{
    u_char     key[NGX_HTTP_GATEWAY_HIT_WINDOW_KEY_LEN];
    size_t     key_len;
    long       index;
    double     now, elapsed, current, previous = 0, estimate;
    ngx_int_t  rc;

    if (!ngx_http_gateway_hit_parse_limit(identity->limit.data, identity->limit.len,
                                          &a->requests, &a->per))
    {
        return 0;
    }

    now = ngx_http_gateway_hit_now();
    index = (long) floor(now / a->per);
    elapsed = now - (double) index * a->per;
    a->key_len = ngx_http_gateway_hit_window_key(a->key, sizeof(a->key), identity->row.data,
                                                 identity->row.len, a->per, index);
    key_len = ngx_http_gateway_hit_window_key(key, sizeof(key), identity->row.data,
                                              identity->row.len, a->per, index - 1);
    if (a->key_len == 0 || key_len == 0) {
        return 0;
    }

    /* Windows live two periods: the next one still weighs this one. */
    current = ngx_http_gateway_hit_add(ngx_http_gateway_hit_limits, a->key, a->key_len, 1,
                                       2000L * a->per);
    if (current < 0) {
        return 0;
    }

    rc = ngx_http_gateway_hit_read_number(ngx_http_gateway_hit_limits, key, key_len, &previous);
    if (rc == NGX_ERROR) {
        ngx_http_gateway_hit_take_back(a->key, a->key_len);
        return 0;
    }
    if (rc == NGX_DECLINED) {
        previous = 0;
    }

    estimate = previous * (1 - elapsed / a->per) + current;
    if (estimate > a->requests) {
        /* not counted: Lua counts it again, or refuses it */
        ngx_http_gateway_hit_take_back(a->key, a->key_len);
        return 0;
    }

    a->remaining = (long) floor(a->requests - estimate);
    a->reset = (long) ceil(a->per - elapsed);
    if (a->reset < 1) {
        a->reset = 1;
    }
    return 1;
}


/* The RateLimit-Policy and RateLimit headers of an admitted request (lua/gateway/ratelimit.lua
 * sets the same). */
static ngx_flag_t
ngx_http_gateway_hit_announce(ngx_http_request_t *r, ngx_http_gateway_hit_admission_t *a)
{
    u_char           value[128], *last;
    ngx_table_elt_t  *policy;

    last = ngx_snprintf(value, sizeof(value), "\"" GW_RATE_LIMIT_POLICY_NAME "\";q=%l;w=%l",
                        a->requests, a->per);
    policy = ngx_http_gateway_hit_add_header(r, GW_RATE_LIMIT_POLICY_HEADER, value,
                                             last - value);
    if (policy == NULL) {
        return 0;
    }

    last = ngx_snprintf(value, sizeof(value), "\"" GW_RATE_LIMIT_POLICY_NAME "\";r=%l;t=%l",
                        a->remaining, a->reset);
    if (ngx_http_gateway_hit_add_header(r, GW_RATE_LIMIT_STATE_HEADER, value, last - value)
        == NULL)
    {
        policy->hash = 0;
        return 0;
    }
    return 1;
}


/* A response header, as the Lua code's ngx.header sets one in the access phase; NULL when
 * there is no memory for it. */
static ngx_table_elt_t *
ngx_http_gateway_hit_add_header(ngx_http_request_t *r, const char *name, u_char *value,
    size_t len)
{
    ngx_table_elt_t  *h;

    h = ngx_list_push(&r->headers_out.headers);
    if (h == NULL) {
        return NULL;
    }

    h->value.data = ngx_pnalloc(r->pool, len);
    if (h->value.data == NULL) {
        h->hash = 0;  /* an entry whose hash is 0 is not sent */
        return NULL;
    }

    ngx_memcpy(h->value.data, value, len);
    h->value.len = len;
    h->key.data = (u_char *) name;
    h->key.len = ngx_strlen(name);
    h->lowcase_key = NULL;
#if defined(nginx_version) && nginx_version >= 1023000
    h->next = NULL;
#endif
    h->hash = 1;
    return h;
}


static ngx_http_variable_value_t *
ngx_http_gateway_hit_variable(ngx_http_request_t *r, ngx_uint_t which)
{
    ngx_http_variable_value_t         *v;
    ngx_http_gateway_hit_main_conf_t  *gmcf;

    gmcf = ngx_http_get_module_main_conf(r, ngx_http_gateway_hit_module);
    v = ngx_http_get_indexed_variable(r, gmcf->var_index[which]);

    return (v == NULL || v->not_found) ? NULL : v;
}


static ngx_flag_t
ngx_http_gateway_hit_set_variable(ngx_http_request_t *r, ngx_uint_t which,
    ngx_http_gateway_hit_str_t *value)
{
    u_char                            *copy;
    ngx_http_variable_value_t         *v;
    ngx_http_gateway_hit_main_conf_t  *gmcf;

    gmcf = ngx_http_get_module_main_conf(r, ngx_http_gateway_hit_module);
    v = &r->variables[gmcf->var_index[which]];

    copy = ngx_pnalloc(r->pool, value->len ? value->len : 1);
    if (copy == NULL) {
        return 0;
    }

    ngx_memcpy(copy, value->data, value->len);
    v->data = copy;
    v->len = value->len;
    v->valid = 1;
    v->no_cacheable = 0;
    v->not_found = 0;
    return 1;
}


/* A number in a shared dict: NGX_OK with it in `n`, NGX_DECLINED when the key is absent,
 * NGX_ERROR when it cannot be read or holds anything but a number. */
static ngx_int_t
ngx_http_gateway_hit_read_number(ngx_shm_zone_t *zone, const u_char *key, size_t len,
    double *n)
{
    int      type = 0, flags = 0, stale = 0;
    char    *err = NULL;
    u_char   text[32], *buf = text;
    size_t   blen = sizeof(text);

    if (ngx_http_lua_ffi_shdict_get(zone, key, len, &type, &buf, &blen, n, &flags, 0, &stale,
                                    &err)
        != NGX_OK)
    {
        return NGX_ERROR;
    }

    /* A string where a number belongs: lua-nginx-module copied it into `text`, or into memory
     * it allocated when it was longer, which is ours to free. */
    if (buf != text) {
        free(buf);
    }

    if (type == NGX_HTTP_GATEWAY_HIT_TNIL) {
        return NGX_DECLINED;
    }

    return type == NGX_HTTP_GATEWAY_HIT_TNUMBER ? NGX_OK : NGX_ERROR;
}


/* Reads `key` of a shared dict into `buf` (NGX_HTTP_GATEWAY_HIT_RECORD_BUFFER bytes): its
 * length, or 0 when it is absent, not a string, or longer than the buffer (then the Lua code
 * decides). */
static size_t
ngx_http_gateway_hit_read_string(ngx_shm_zone_t *zone, u_char *key, size_t key_len,
    u_char *buf)
{
    int      type = 0, flags = 0, stale = 0;
    char    *err = NULL;
    u_char  *val = buf;
    size_t   vlen = NGX_HTTP_GATEWAY_HIT_RECORD_BUFFER;
    double   num = 0;

    if (ngx_http_lua_ffi_shdict_get(zone, key, key_len, &type, &val, &vlen, &num, &flags, 0,
                                    &stale, &err)
        != NGX_OK)
    {
        return 0;
    }

    if (val != buf) {
        free(val);  /* larger than the buffer: lua-nginx-module allocated it */
        return 0;
    }

    return type == NGX_HTTP_GATEWAY_HIT_TSTRING ? vlen : 0;
}


/* Adds `by` to a number in a shared dict, created at 0 if absent with `ttl_ms` to live (0: for
 * ever; resty.core passes its seconds times 1000 too): its new value, or -1 when it cannot be
 * counted (no dict, no room, not a number). */
static double
ngx_http_gateway_hit_add(ngx_shm_zone_t *zone, u_char *key, size_t len, double by,
    long ttl_ms)
{
    int    forcible = 0;
    char  *err = NULL;

    if (zone == NULL
        || ngx_http_lua_ffi_shdict_incr(zone, key, len, &by, &err, 1, 0, ttl_ms, &forcible)
           != NGX_OK)
    {
        return -1;
    }

    return by;
}


/* A request taken back out of a rate limit's window it was counted in (it goes to Lua, which
 * counts it itself). Only ever from a count that is there: a window evicted in between is not
 * made again, at -1 and without an expiry, where it would give the client a request more in a
 * window that never ends. */
static void
ngx_http_gateway_hit_take_back(u_char *key, size_t len)
{
    int     forcible = 0;
    char   *err = NULL;
    double  by = -1;

    if (ngx_http_gateway_hit_limits != NULL) {
        (void) ngx_http_lua_ffi_shdict_incr(ngx_http_gateway_hit_limits, key, len, &by, &err, 0,
                                            0, 0, &forcible);
    }
}


/* A revocation marker (Unix time, s), or -1 when there is none. */
static double
ngx_http_gateway_hit_marker(const u_char *key, size_t len)
{
    double  n = 0;

    switch (ngx_http_gateway_hit_read_number(ngx_http_gateway_hit_revocations, key, len, &n)) {
    case NGX_OK:
        return n;
    case NGX_DECLINED:
        return -1;
    default:
        /* cannot tell, or not a marker Lua wrote: as if revoked, Lua decides */
        return 1e300;
    }
}


/* Whether something learnt about client `row` at `created` still holds (lua/gateway/cache.lua's
 * alive): no revocation of that client, or of everything, at or after that moment. */
static ngx_flag_t
ngx_http_gateway_hit_alive(u_char *row, size_t len, double created)
{
    return ngx_http_gateway_hit_marker(row, len) < created
           && ngx_http_gateway_hit_marker((u_char *) "*", 1) < created;
}


/* ngx.now(): the cached time of this event loop turn, to the millisecond. */
static double
ngx_http_gateway_hit_now(void)
{
    ngx_time_t  *tp;

    tp = ngx_timeofday();

    return tp->sec + tp->msec / 1000.0;
}


static void
ngx_http_gateway_hit_digest(u_char *secret, u_char *digest)
{
    SHA256_CTX  sha;

    SHA256_Init(&sha);
    SHA256_Update(&sha, secret, NGX_HTTP_GATEWAY_HIT_SECRET_LEN);
    SHA256_Final(digest, &sha);
}


/* Called by the Lua access code (lua/gateway/access.lua) first, with the request it decides: 1
 * when this module found the request's key id to be nobody's (ngx_http_gateway_hit_no_client), so
 * the Lua code refuses it without making a Lua string of the guessed credential or of the
 * header block (docs/decisions/20261129-guessed-ids-in-c.md); 0 for anything else. */
int
GW_NOBODY_TELLER(ngx_http_request_t *r)
{
    return r != NULL && ngx_http_gateway_hit_on
           && ngx_http_get_module_ctx(r, ngx_http_gateway_hit_module)
              == &ngx_http_gateway_hit_nobody_mark;
}


/* Called by the Lua code in the master (init_by_lua) with the decision cache's hashing key and
 * lua-nginx-module's version: 1 when the module takes them, 0 when it is off for that version. */
int
GW_HMAC_KEY_SETTER(const u_char *key, size_t len, unsigned int lua_version)
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


static void *
ngx_http_gateway_hit_create_main_conf(ngx_conf_t *cf)
{
    return ngx_pcalloc(cf->pool, sizeof(ngx_http_gateway_hit_main_conf_t));
}


static void *
ngx_http_gateway_hit_create_loc_conf(ngx_conf_t *cf)
{
    ngx_http_gateway_hit_loc_conf_t  *conf;

    conf = ngx_pcalloc(cf->pool, sizeof(ngx_http_gateway_hit_loc_conf_t));
    if (conf == NULL) {
        return NULL;
    }

    conf->enabled = NGX_CONF_UNSET;

    return conf;
}


/* Not inherited: only the location that says it decides hits here. A location nested in it, or
 * added by hand beside it, goes to Lua. */
static char *
ngx_http_gateway_hit_merge_loc_conf(ngx_conf_t *cf, void *parent, void *child)
{
    ngx_http_gateway_hit_loc_conf_t  *conf = child;

    ngx_http_gateway_hit_main_conf_t  *gmcf;

    ngx_conf_init_value(conf->enabled, 0);

    if (conf->enabled) {
        gmcf = ngx_http_conf_get_module_main_conf(cf, ngx_http_gateway_hit_module);
        gmcf->used = 1;
    }

    return NGX_CONF_OK;
}


static ngx_int_t
ngx_http_gateway_hit_init(ngx_conf_t *cf)
{
    ngx_uint_t                         i;
    ngx_http_gateway_hit_main_conf_t  *gmcf;

    gmcf = ngx_http_conf_get_module_main_conf(cf, ngx_http_gateway_hit_module);
    if (!gmcf->used) {
        return NGX_OK;
    }

    for (i = 0; i < NGX_HTTP_GATEWAY_HIT_V_COUNT; i++) {
        gmcf->var_index[i] = ngx_http_get_variable_index(cf, &ngx_http_gateway_hit_var_names[i]);
        if (gmcf->var_index[i] == NGX_ERROR) {
            return NGX_ERROR;
        }
    }

    return NGX_OK;
}


/* After the configuration is read (the phase engine is built by then): Lua's access handler
 * becomes ours, which calls it for everything it does not pass itself. */
static ngx_int_t
ngx_http_gateway_hit_init_module(ngx_cycle_t *cycle)
{
    ngx_uint_t                         i, wrapped;
    ngx_http_phase_handler_t          *ph;
    ngx_http_core_main_conf_t         *cmcf;
    ngx_http_gateway_hit_main_conf_t  *gmcf;

    cmcf = ngx_http_cycle_get_module_main_conf(cycle, ngx_http_core_module);
    gmcf = ngx_http_cycle_get_module_main_conf(cycle, ngx_http_gateway_hit_module);
    if (cmcf == NULL || gmcf == NULL || !gmcf->used) {
        return NGX_OK;
    }

    /* Off unless the Lua code said its version and it is the one tested: then nothing of this
     * module runs per request, and lua-nginx-module's handler stays where it was. */
    ngx_http_gateway_hit_on = ngx_http_gateway_hit_lua_version == GW_LUA_MODULE_VERSION;
    if (!ngx_http_gateway_hit_on) {
        ngx_log_error(NGX_LOG_WARN, cycle->log, 0,
                      GW_DIRECTIVE ": off, every request goes to the Lua code: built and "
                      "tested against lua-nginx-module %ui.%ui.%ui, and %s",
                      (ngx_uint_t) GW_LUA_MODULE_VERSION / 1000000,
                      (ngx_uint_t) GW_LUA_MODULE_VERSION / 1000 % 1000,
                      (ngx_uint_t) GW_LUA_MODULE_VERSION % 1000,
                      ngx_http_gateway_hit_lua_version == 0
                      ? "the Lua code did not say its version (no init_by_lua?)"
                      : "this is another version");
        return NGX_OK;
    }

    ph = cmcf->phase_engine.handlers;
    wrapped = 0;

    for (i = 0; ph[i].checker; i++) {
        if (ph[i].handler == ngx_http_lua_access_handler) {
            ph[i].handler = ngx_http_gateway_hit_handler;
            wrapped++;
        }
    }

    if (wrapped == 0) {
        /* A configuration without Lua's access phase (the bench's auth-off copies): there is
         * nothing to decide, and nothing that could be skipped. */
        ngx_log_error(NGX_LOG_NOTICE, cycle->log, 0,
                      GW_DIRECTIVE ": no Lua access phase, nothing to decide");
    }

    return NGX_OK;
}


static ngx_int_t
ngx_http_gateway_hit_init_process(ngx_cycle_t *cycle)
{
    ngx_http_gateway_hit_main_conf_t  *gmcf;

    gmcf = ngx_http_cycle_get_module_main_conf(cycle, ngx_http_gateway_hit_module);
    if (gmcf == NULL || !gmcf->used || !ngx_http_gateway_hit_on) {
        return NGX_OK;
    }

    ngx_http_gateway_hit_keys = ngx_http_gateway_hit_find_zone(GW_KEYS_DICT);
    ngx_http_gateway_hit_revocations = ngx_http_gateway_hit_find_zone(GW_REVOCATIONS_DICT);
    ngx_http_gateway_hit_limits = ngx_http_gateway_hit_find_zone(GW_LIMITS_DICT);
    ngx_http_gateway_hit_metrics = ngx_http_gateway_hit_find_zone(GW_METRICS_DICT);
    ngx_http_gateway_hit_decisions = ngx_http_gateway_hit_find_zone(GW_DECISIONS_DICT);
    ngx_http_gateway_hit_key_table_zone = ngx_http_gateway_hit_find_zone(GW_KEY_TABLE_DICT);

    /* Only the workers serve requests (not a helper such as a privileged agent). */
    if (ngx_http_gateway_hit_key_table_zone == NULL
        || (ngx_process != NGX_PROCESS_WORKER && ngx_process != NGX_PROCESS_SINGLE))
    {
        return NGX_OK;
    }

    /* A worker may copy as much as the table holds (its records are the table's values without
     * the dict's node of about 80 bytes each), up to the arena's cap of 4 GiB - 1: a table
     * larger than that holds more than the index does (2^20 copies). */
    (void) ngx_http_gateway_hit_records_limit(
        ngx_max((size_t) NGX_HTTP_GATEWAY_HIT_RECORDS_MAX_BYTES,
                ngx_http_gateway_hit_key_table_zone->shm.size));

    ngx_http_gateway_hit_sweep_event.handler = ngx_http_gateway_hit_sweep;
    ngx_http_gateway_hit_sweep_event.log = cycle->log;
    ngx_http_gateway_hit_sweep_dumb.fd = (ngx_socket_t) -1;
    ngx_http_gateway_hit_sweep_event.data = &ngx_http_gateway_hit_sweep_dumb;
    /* A worker shutting down gracefully does not wait for it. */
    ngx_http_gateway_hit_sweep_event.cancelable = 1;
    ngx_add_timer(&ngx_http_gateway_hit_sweep_event, NGX_HTTP_GATEWAY_HIT_SWEEP_IDLE_MS);

    return NGX_OK;
}


static void
ngx_http_gateway_hit_exit_process(ngx_cycle_t *cycle)
{
    ngx_http_gateway_hit_usage_release();
    ngx_http_gateway_hit_records_release();
}


static ngx_shm_zone_t *
ngx_http_gateway_hit_find_zone(const char *name)
{
    return ngx_http_lua_find_zone((u_char *) name, ngx_strlen(name));
}
