/*
 * The gateway's nginx module: a seen API key's or token's hit decided in C,
 * without entering Lua's access phase. What it passes, its contract with the
 * Lua code and how it is tested: docs/decisions/20261125-hit-in-c.md (and
 * 20261127-key-table-replica.md for the key table).
 *
 * After the configuration is read, lua-nginx-module's access handler is
 * replaced in the phase engine by ngx_http_gateway_hit_handler, which calls it
 * unchanged unless the location says `gateway_hit on;` and the request is
 * plainly a hit. It never refuses: anything else, a doubt included, goes to the
 * Lua access code. This file is the flow, read top to bottom: the request
 * screened, its credential looked up (a key table record, a learnt key record
 * or a cached decision), the identity used. Each concern is a file of its own,
 * named after its Lua twin (ngx_http_gateway_hit_module.h lists them); the
 * parsing and judging of bytes is in the pure ngx_http_gateway_hit_parse_*.c
 * (fuzzed). Names come from gateway_contract.h, generated from
 * common/contract.ts.
 */
#include "ngx_http_gateway_hit_module.h"
#include "ngx_http_gateway_hit_records.h"
#include "ngx_http_gateway_hit_usage.h"

/* The nobody teller's name is the contract's (see the module's header). */
#pragma GCC diagnostic error "-Wmissing-prototypes"


/* lua-nginx-module's access handler, which this module's handler wraps. */
ngx_int_t ngx_http_lua_access_handler(ngx_http_request_t *r);


typedef struct {
    ngx_flag_t                 enabled;
} ngx_http_gateway_hit_loc_conf_t;


/* Per configuration, not in statics: a worker respawned for the running
 * configuration after a reload failed must not see the indexes of the
 * configuration that failed. */
typedef struct {
    /* whether any location said `gateway_hit on;`: without one no variable is
     * looked up, so a configuration that does not use the module needs none of
     * them */
    ngx_flag_t                 used;
    ngx_int_t                  var_index[NGX_HTTP_GATEWAY_HIT_V_COUNT];
} ngx_http_gateway_hit_main_conf_t;


static ngx_int_t ngx_http_gateway_hit_handler(ngx_http_request_t *r);
static ngx_flag_t ngx_http_gateway_hit_decide(ngx_http_request_t *r,
    ngx_flag_t *nobody);
static ngx_flag_t ngx_http_gateway_hit_screened(ngx_http_request_t *r);
static ngx_flag_t ngx_http_gateway_hit_use(ngx_http_request_t *r,
    ngx_http_gateway_hit_identity_t *identity);
static ngx_flag_t ngx_http_gateway_hit_permitted(ngx_http_request_t *r,
    ngx_http_gateway_hit_identity_t *identity);
static ngx_flag_t ngx_http_gateway_hit_tell(ngx_http_request_t *r,
    ngx_http_gateway_hit_identity_t *identity);
static void ngx_http_gateway_hit_count(
    ngx_http_gateway_hit_identity_t *identity);
static ngx_flag_t ngx_http_gateway_hit_set_variable(ngx_http_request_t *r,
    ngx_uint_t which, ngx_http_gateway_hit_str_t *value);

static void *ngx_http_gateway_hit_create_main_conf(ngx_conf_t *cf);
static void *ngx_http_gateway_hit_create_loc_conf(ngx_conf_t *cf);
static char *ngx_http_gateway_hit_merge_loc_conf(ngx_conf_t *cf, void *parent,
    void *child);
static ngx_int_t ngx_http_gateway_hit_init(ngx_conf_t *cf);
static ngx_int_t ngx_http_gateway_hit_init_module(ngx_cycle_t *cycle);
static ngx_int_t ngx_http_gateway_hit_init_process(ngx_cycle_t *cycle);
static void ngx_http_gateway_hit_exit_process(ngx_cycle_t *cycle);


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


static ngx_str_t
    ngx_http_gateway_hit_var_names[NGX_HTTP_GATEWAY_HIT_V_COUNT] = {
    ngx_string(GW_API_KEYS_VARIABLE),
    ngx_string(GW_MAX_AGE_VARIABLE),
    ngx_string(GW_DECISION_INPUTS_VARIABLE),
    ngx_string(GW_CLIENT_ID_VARIABLE),
    ngx_string(GW_CLIENT_NAME_VARIABLE),
    ngx_string(GW_IS_ADMIN_VARIABLE),
    ngx_string(GW_METHOD_VARIABLE)
};

/* Whether the module runs at all: lua-nginx-module's version is the one it was
 * tested with (ngx_http_gateway_hit_init_module). */
static ngx_flag_t  ngx_http_gateway_hit_on;

/* A request's context when this module found its key id to be nobody's
 * (GW_NOBODY_TELLER). */
static u_char      ngx_http_gateway_hit_nobody_mark;


static ngx_int_t
ngx_http_gateway_hit_handler(ngx_http_request_t *r)
{
    ngx_flag_t                        nobody;
    ngx_http_gateway_hit_loc_conf_t  *glcf;

    glcf = ngx_http_get_module_loc_conf(r, ngx_http_gateway_hit_module);

    /*
     * Once per request: lua-nginx-module resumes a paused access handler
     * (ngx.sleep, a wait on the sidecar) by running this phase's handler again.
     * Deciding again then could pass a request Lua has already answered (a 429
     * in its tarpit), and leave Lua's coroutine unfinished. The context is
     * cleared by an internal redirect, whose new location is decided afresh, as
     * Lua's own is.
     */
    if (glcf->enabled
        && ngx_http_get_module_ctx(r, ngx_http_gateway_hit_module) == NULL)
    {
        nobody = 0;
        if (ngx_http_gateway_hit_decide(r, &nobody)) {
            /* What Lua's handler returns when its code ends without ngx.exit
             * (access granted). */
            return NGX_OK;
        }

        /* Any non-NULL pointer: that the module has had its turn, and what it
         * found for the Lua code to refuse (GW_NOBODY_TELLER). */
        if (nobody) {
            ngx_http_set_ctx(r, &ngx_http_gateway_hit_nobody_mark,
                             ngx_http_gateway_hit_module);

        } else {
            ngx_http_set_ctx(r, &ngx_http_gateway_hit_module,
                             ngx_http_gateway_hit_module);
        }
    }

    return ngx_http_lua_access_handler(r);
}


/* 1: a hit, decided and used (variables set, counted); 0: the Lua code decides,
 * told by *nobody = 1 that the key id is nobody's (the rest of the request
 * screened as Lua's request_check screens it, or stricter: refusing it as
 * nobody's is all that is left). */
static ngx_flag_t
ngx_http_gateway_hit_decide(ngx_http_request_t *r, ngx_flag_t *nobody)
{
    u_char                          *secret;
    u_char                           buf[NGX_HTTP_GATEWAY_HIT_RECORD_BUFFER];
    ngx_int_t                        max_age_ms;
    ngx_str_t                        id, *credential;
    ngx_flag_t                       api_keys, is_key, found;
    ngx_http_variable_value_t       *v;
    ngx_http_gateway_hit_str_t       key_id;
    ngx_http_gateway_hit_identity_t  identity;

    if (!ngx_http_gateway_hit_screened(r)) {
        return 0;
    }

    credential = &r->headers_in.authorization->value;
    secret = NULL;
    key_id.len = 0;
    key_id.data = NULL;
    v = ngx_http_gateway_hit_variable(r, NGX_HTTP_GATEWAY_HIT_V_API_KEYS);
    api_keys = v != NULL && v->len == 4 && ngx_strncmp(v->data, "true", 4) == 0;
    is_key = api_keys
             && ngx_http_gateway_hit_parse_api_key(credential->data,
                                                   credential->len, &key_id,
                                                   &secret);
    id.data = key_id.data;
    id.len = key_id.len;

    /* As the Lua code: an API key in the issued shape is decided by its record
     * in the trusted key table (absent there: Lua's), else by its learnt key
     * record alone (a record that does not pass it is Lua's to refuse or ask
     * about); anything else by the decision cache. Each finds the client's
     * identity, in `buf` or a copy of this worker's. */
    if (is_key && ngx_http_gateway_hit_key_table_trusted()) {
        found = ngx_http_gateway_hit_key_table(&id, secret, buf, &identity,
                                               nobody);

    } else {
        v = ngx_http_gateway_hit_variable(r, NGX_HTTP_GATEWAY_HIT_V_MAX_AGE);
        max_age_ms = v == NULL ? NGX_ERROR : ngx_atoi(v->data, v->len);
        if (max_age_ms == NGX_ERROR || max_age_ms <= 0) {
            return 0;
        }

        if (is_key) {
            found = ngx_http_gateway_hit_key_record(&id, secret, max_age_ms,
                                                    buf, &identity);

        } else {
            found = ngx_http_gateway_hit_cached(r, credential, buf, &identity);
        }
    }

    return found && ngx_http_gateway_hit_use(r, &identity);
}


/* Whether the request is one the module may decide at all: a main request of a
 * method it knows, its headers and path screened (a path Lua's request_check
 * might refuse, BAD_PATH, is Lua's, before any nobody), with a credential. */
static ngx_flag_t
ngx_http_gateway_hit_screened(ngx_http_request_t *r)
{
    if (r != r->main || ngx_http_gateway_hit_revocations == NULL) {
        return 0;
    }

    if (!(r->method & GW_ALLOWED_METHODS)) {
        return 0;
    }

    if (!ngx_http_gateway_hit_clean_headers(r)) {
        return 0;
    }

    if (!ngx_http_gateway_hit_plain_path(r->unparsed_uri.data,
                                         r->unparsed_uri.len))
    {
        return 0;
    }

    return r->headers_in.authorization != NULL;
}


/* The request into the client's rate limit if it has one (0: it does not fit,
 * Lua's), the identity into the variables, the request into the client's usage
 * and the counters. */
static ngx_flag_t
ngx_http_gateway_hit_use(ngx_http_request_t *r,
    ngx_http_gateway_hit_identity_t *identity)
{
    ngx_flag_t                        limited;
    ngx_http_gateway_hit_admission_t  a;

    if (!ngx_http_gateway_hit_permitted(r, identity)) {
        return 0;
    }

    limited = identity->limit.len != 0;

    if (limited && !ngx_http_gateway_hit_admit(identity, &a)) {
        return 0;
    }

    if (!ngx_http_gateway_hit_tell(r, identity)
        || (limited && !ngx_http_gateway_hit_announce(r, &a)))
    {
        if (limited) {
            /* Lua counts it when it passes it */
            ngx_http_gateway_hit_take_back(a.key, a.key_len);
        }
        return 0;
    }

    ngx_http_gateway_hit_count(identity);
    return 1;
}


/* A client with permissions passes only a request its rules allow, on an
 * origin-form target (an absolute-form one's path alone is in unparsed_uri);
 * any other is Lua's, which refuses it
 * (docs/decisions/20261128-permissions.md). */
static ngx_flag_t
ngx_http_gateway_hit_permitted(ngx_http_request_t *r,
    ngx_http_gateway_hit_identity_t *identity)
{
    ngx_http_gateway_hit_str_t  *rules = &identity->rules;

    if (rules->len == 0) {
        return 1;
    }

    return r->request_line.len > r->method_name.len + 1
           && r->request_line.data[r->method_name.len + 1] == '/'
           && ngx_http_gateway_hit_permits(rules->data, rules->len,
                                           r->method_name.data,
                                           r->method_name.len,
                                           r->unparsed_uri.data,
                                           r->unparsed_uri.len);
}


/* The identity into the variables the application's headers are made of. */
static ngx_flag_t
ngx_http_gateway_hit_tell(ngx_http_request_t *r,
    ngx_http_gateway_hit_identity_t *identity)
{
    return ngx_http_gateway_hit_set_variable(r,
                                             NGX_HTTP_GATEWAY_HIT_V_CLIENT_ID,
                                             &identity->client_id)
           && ngx_http_gateway_hit_set_variable(r,
                                             NGX_HTTP_GATEWAY_HIT_V_CLIENT_NAME,
                                             &identity->client_name)
           && ngx_http_gateway_hit_set_variable(r,
                                             NGX_HTTP_GATEWAY_HIT_V_IS_ADMIN,
                                             &identity->is_admin)
           && ngx_http_gateway_hit_set_variable(r,
                                             NGX_HTTP_GATEWAY_HIT_V_METHOD,
                                             &identity->method);
}


/* The request into the client's usage and the counters. Usage is counted in
 * this worker's memory and handed to Lua once a second; a row it cannot count
 * (not digits, no memory) goes straight into the dict, as a number Lua's drain
 * reads too. */
static void
ngx_http_gateway_hit_count(ngx_http_gateway_hit_identity_t *identity)
{
    u_char     key[64], *last;
    ngx_str_t  row;

    row.data = identity->row.data;
    row.len = identity->row.len;

    if (ngx_http_gateway_hit_usage_count(row.data, row.len) != 0) {
        last = ngx_snprintf(key, sizeof(key), GW_USAGE_ALLOWED_PREFIX "%T %V",
                            ngx_time() / GW_USAGE_GENERATION_S, &row);
        ngx_http_gateway_hit_add(ngx_http_gateway_hit_limits, key, last - key,
                                 1, GW_USAGE_KEEP_S * 1000L);
    }

    ngx_http_gateway_hit_counter_add(identity->counter, 1);
    ngx_http_gateway_hit_counter_add(GW_MODULE_HIT_COUNTER, 1);
}


ngx_http_variable_value_t *
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


/* Called by the Lua access code (lua/gateway/access.lua) first, with the
 * request it decides: 1 when this module found the request's key id to be
 * nobody's (ngx_http_gateway_hit_no_client), so the Lua code refuses it without
 * making a Lua string of the guessed credential or of the header block
 * (docs/decisions/20261129-guessed-ids-in-c.md); 0 for anything else. */
int
ngx_http_gateway_hit_nobody(ngx_http_request_t *r)
{
    return r != NULL && ngx_http_gateway_hit_on
           && ngx_http_get_module_ctx(r, ngx_http_gateway_hit_module)
              == &ngx_http_gateway_hit_nobody_mark;
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


/* Not inherited: only the location that says it decides hits here. A location
 * nested in it, or added by hand beside it, goes to Lua. */
static char *
ngx_http_gateway_hit_merge_loc_conf(ngx_conf_t *cf, void *parent, void *child)
{
    ngx_http_gateway_hit_loc_conf_t  *conf = child;

    ngx_http_gateway_hit_main_conf_t  *gmcf;

    ngx_conf_init_value(conf->enabled, 0);

    if (conf->enabled) {
        gmcf = ngx_http_conf_get_module_main_conf(cf,
                                                  ngx_http_gateway_hit_module);
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
        gmcf->var_index[i] =
            ngx_http_get_variable_index(cf, &ngx_http_gateway_hit_var_names[i]);
        if (gmcf->var_index[i] == NGX_ERROR) {
            return NGX_ERROR;
        }
    }

    return NGX_OK;
}


/* After the configuration is read (the phase engine is built by then): Lua's
 * access handler becomes ours, which calls it for everything it does not pass
 * itself. */
static ngx_int_t
ngx_http_gateway_hit_init_module(ngx_cycle_t *cycle)
{
    ngx_uint_t                         i, wrapped;
    ngx_http_phase_handler_t          *ph;
    ngx_http_core_main_conf_t         *cmcf;
    ngx_http_gateway_hit_main_conf_t  *gmcf;

    cmcf = ngx_http_cycle_get_module_main_conf(cycle, ngx_http_core_module);
    gmcf = ngx_http_cycle_get_module_main_conf(cycle,
                                               ngx_http_gateway_hit_module);
    if (cmcf == NULL || gmcf == NULL || !gmcf->used) {
        return NGX_OK;
    }

    /* Off unless the Lua code said its version and it is the one tested: then
     * nothing of this module runs per request, and lua-nginx-module's handler
     * stays where it was. */
    ngx_http_gateway_hit_on =
        ngx_http_gateway_hit_lua_version == GW_LUA_MODULE_VERSION;
    if (!ngx_http_gateway_hit_on) {
        ngx_log_error(NGX_LOG_WARN, cycle->log, 0,
                      GW_DIRECTIVE ": off, every request goes to the Lua code: "
                      "built and tested against lua-nginx-module %ui.%ui.%ui, "
                      "and %s",
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
        /* A configuration without Lua's access phase (the bench's auth-off
         * copies): there is nothing to decide, and nothing that could be
         * skipped. */
        ngx_log_error(NGX_LOG_NOTICE, cycle->log, 0,
                      GW_DIRECTIVE ": no Lua access phase, nothing to decide");
    }

    return NGX_OK;
}


static ngx_int_t
ngx_http_gateway_hit_init_process(ngx_cycle_t *cycle)
{
    ngx_http_gateway_hit_main_conf_t  *gmcf;

    gmcf = ngx_http_cycle_get_module_main_conf(cycle,
                                               ngx_http_gateway_hit_module);
    if (gmcf == NULL || !gmcf->used || !ngx_http_gateway_hit_on) {
        return NGX_OK;
    }

    ngx_http_gateway_hit_find_zones();

    /* Only the workers serve requests (not a helper such as a privileged
     * agent). */
    if (ngx_http_gateway_hit_key_table_zone == NULL
        || (ngx_process != NGX_PROCESS_WORKER
            && ngx_process != NGX_PROCESS_SINGLE))
    {
        return NGX_OK;
    }

    ngx_http_gateway_hit_sweep_start(cycle);

    return NGX_OK;
}


static void
ngx_http_gateway_hit_exit_process(ngx_cycle_t *cycle)
{
    ngx_http_gateway_hit_usage_release();
    ngx_http_gateway_hit_records_release();
}
