/*
 * nginx's own span records, batched (docs/decisions/20261203-nginx-span-export.md).
 *
 *   gateway_span_log <host:port> <record> [if=<condition>];   (http, server, location)
 *   gateway_span_log off;
 *
 * In the log phase of each request whose condition is neither empty nor "0"
 * (as access_log's if=), the record, a complex value of nginx variables, is
 * appended to the worker's batch as "<length>:<record>". The batch goes to
 * <host:port> as one UDP datagram when the next record would not fit, 100 ms
 * after its first record, and when the worker exits. The syslog access_log this
 * replaces sent one datagram a request, and the datagram was most of what
 * tracing cost nginx; a batch of a few hundred records costs one send().
 *
 * Nothing waits for the sidecar and nothing is retried: a send that fails (the
 * sidecar not listening yet, its buffer full) drops the batch and says so in
 * the error log, now and then. Spans are best effort; the requests are done.
 * One address per configuration: the socket and the batch are the worker's.
 */
#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include "gateway_contract.h"


typedef struct {
    ngx_http_complex_value_t   record;
    /* NULL: every request */
    ngx_http_complex_value_t  *condition;
} ngx_http_gateway_span_log_t;


typedef struct {
    /* NULL: off */
    ngx_http_gateway_span_log_t  *log;
} ngx_http_gateway_span_log_loc_conf_t;


typedef struct {
    /* where the batches go; NULL when no gateway_span_log names one */
    ngx_addr_t                 *peer;
} ngx_http_gateway_span_log_main_conf_t;


static ngx_int_t ngx_http_gateway_span_log_handler(ngx_http_request_t *r);
static void ngx_http_gateway_span_log_flush(ngx_log_t *log);
static void ngx_http_gateway_span_log_on_timer(ngx_event_t *ev);

static char *ngx_http_gateway_span_log(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);
static void *ngx_http_gateway_span_log_create_main_conf(ngx_conf_t *cf);
static void *ngx_http_gateway_span_log_create_loc_conf(ngx_conf_t *cf);
static char *ngx_http_gateway_span_log_merge_loc_conf(ngx_conf_t *cf,
    void *parent, void *child);
static ngx_int_t ngx_http_gateway_span_log_init(ngx_conf_t *cf);
static ngx_int_t ngx_http_gateway_span_log_init_process(ngx_cycle_t *cycle);
static void ngx_http_gateway_span_log_exit_process(ngx_cycle_t *cycle);


static ngx_command_t  ngx_http_gateway_span_log_commands[] = {

    { ngx_string(GW_SPAN_LOG_DIRECTIVE),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_TAKE123,
      ngx_http_gateway_span_log,
      NGX_HTTP_LOC_CONF_OFFSET,
      0,
      NULL },

      ngx_null_command
};


static ngx_http_module_t  ngx_http_gateway_span_log_module_ctx = {
    NULL,                                       /* preconfiguration */
    ngx_http_gateway_span_log_init,             /* postconfiguration */

    ngx_http_gateway_span_log_create_main_conf, /* create main configuration */
    NULL,                                       /* init main configuration */

    NULL,                                       /* create server configuration */
    NULL,                                       /* merge server configuration */

    ngx_http_gateway_span_log_create_loc_conf,  /* create location configuration */
    ngx_http_gateway_span_log_merge_loc_conf    /* merge location configuration */
};


ngx_module_t  ngx_http_gateway_span_log_module = {
    NGX_MODULE_V1,
    &ngx_http_gateway_span_log_module_ctx,      /* module context */
    ngx_http_gateway_span_log_commands,         /* module directives */
    NGX_HTTP_MODULE,                            /* module type */
    NULL,                                       /* init master */
    NULL,                                       /* init module */
    ngx_http_gateway_span_log_init_process,     /* init process */
    NULL,                                       /* init thread */
    NULL,                                       /* exit thread */
    ngx_http_gateway_span_log_exit_process,     /* exit process */
    NULL,                                       /* exit master */
    NGX_MODULE_V1_PADDING
};


/* The worker's: its connected socket, its batch and the timer that sends a
 * batch that did not fill. */
static ngx_socket_t      ngx_http_gateway_span_log_socket = (ngx_socket_t) -1;
static u_char            ngx_http_gateway_span_log_batch[GW_SPAN_LOG_BATCH_BYTES];
static size_t            ngx_http_gateway_span_log_used;
static ngx_event_t       ngx_http_gateway_span_log_timer;
/* The timer's data: nginx's event code may read a connection's fd from it when
 * debug logging is on. */
static ngx_connection_t  ngx_http_gateway_span_log_timer_data;
static ngx_uint_t        ngx_http_gateway_span_log_dropped;


static ngx_int_t
ngx_http_gateway_span_log_handler(ngx_http_request_t *r)
{
    u_char                                *p;
    size_t                                 need;
    ngx_str_t                              value;
    ngx_http_gateway_span_log_t           *log;
    ngx_http_gateway_span_log_loc_conf_t  *lcf;

    if (ngx_http_gateway_span_log_socket == (ngx_socket_t) -1) {
        return NGX_OK;
    }

    lcf = ngx_http_get_module_loc_conf(r, ngx_http_gateway_span_log_module);
    log = lcf->log;

    if (log == NULL) {
        return NGX_OK;
    }

    if (log->condition) {
        if (ngx_http_complex_value(r, log->condition, &value) != NGX_OK) {
            return NGX_OK;
        }

        if (value.len == 0 || (value.len == 1 && value.data[0] == '0')) {
            return NGX_OK;
        }
    }

    if (ngx_http_complex_value(r, &log->record, &value) != NGX_OK) {
        return NGX_OK;
    }

    need = NGX_SIZE_T_LEN + 1 + value.len;

    if (need > GW_SPAN_LOG_BATCH_BYTES) {
        /* a record longer than a datagram: only a path that long makes one */
        ngx_http_gateway_span_log_dropped++;
        return NGX_OK;
    }

    if (ngx_http_gateway_span_log_used + need > GW_SPAN_LOG_BATCH_BYTES) {
        ngx_http_gateway_span_log_flush(r->connection->log);
    }

    p = ngx_http_gateway_span_log_batch + ngx_http_gateway_span_log_used;
    p = ngx_sprintf(p, "%uz:", value.len);
    p = ngx_cpymem(p, value.data, value.len);
    ngx_http_gateway_span_log_used = p - ngx_http_gateway_span_log_batch;

    if (!ngx_http_gateway_span_log_timer.timer_set) {
        ngx_add_timer(&ngx_http_gateway_span_log_timer, GW_SPAN_LOG_FLUSH_MS);
    }

    return NGX_OK;
}


static void
ngx_http_gateway_span_log_flush(ngx_log_t *log)
{
    ngx_err_t  err;

    if (ngx_http_gateway_span_log_timer.timer_set) {
        ngx_del_timer(&ngx_http_gateway_span_log_timer);
    }

    if (ngx_http_gateway_span_log_used == 0) {
        return;
    }

    if (send(ngx_http_gateway_span_log_socket, ngx_http_gateway_span_log_batch,
             ngx_http_gateway_span_log_used, 0)
        == -1)
    {
        err = ngx_socket_errno;

        /* the first drop and every thousandth: a sidecar that is down must
         * not fill the error log */
        if (ngx_http_gateway_span_log_dropped++ % 1000 == 0) {
            ngx_log_error(NGX_LOG_WARN, log, err,
                          "%s: a batch of span records dropped (%ui batches "
                          "and records so far)", GW_SPAN_LOG_DIRECTIVE,
                          ngx_http_gateway_span_log_dropped);
        }
    }

    ngx_http_gateway_span_log_used = 0;
}


static void
ngx_http_gateway_span_log_on_timer(ngx_event_t *ev)
{
    ngx_http_gateway_span_log_flush(ev->log);
}


static char *
ngx_http_gateway_span_log(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_gateway_span_log_loc_conf_t  *lcf = conf;

    ngx_str_t                              *value, condition;
    ngx_url_t                               u;
    ngx_http_gateway_span_log_t            *log;
    ngx_http_compile_complex_value_t        ccv;
    ngx_http_gateway_span_log_main_conf_t  *mcf;

    if (lcf->log != NGX_CONF_UNSET_PTR) {
        return "is duplicate";
    }

    value = cf->args->elts;

    if (cf->args->nelts == 2 && ngx_strcmp(value[1].data, "off") == 0) {
        lcf->log = NULL;
        return NGX_CONF_OK;
    }

    if (cf->args->nelts < 3) {
        return "takes <host:port> <record> [if=<condition>], or off";
    }

    ngx_memzero(&u, sizeof(ngx_url_t));
    u.url = value[1];

    if (ngx_parse_url(cf->pool, &u) != NGX_OK) {
        if (u.err) {
            ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "%s in \"%V\"",
                               u.err, &u.url);
        }

        return NGX_CONF_ERROR;
    }

    if (u.no_port || u.naddrs == 0) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "\"%V\" is not a host:port", &u.url);
        return NGX_CONF_ERROR;
    }

    mcf = ngx_http_conf_get_module_main_conf(cf,
                                             ngx_http_gateway_span_log_module);

    if (mcf->peer == NULL) {
        mcf->peer = &u.addrs[0];

    } else if (ngx_cmp_sockaddr(mcf->peer->sockaddr, mcf->peer->socklen,
                                u.addrs[0].sockaddr, u.addrs[0].socklen, 1)
               != NGX_OK)
    {
        return "names a second address: one per configuration";
    }

    log = ngx_pcalloc(cf->pool, sizeof(ngx_http_gateway_span_log_t));
    if (log == NULL) {
        return NGX_CONF_ERROR;
    }

    ngx_memzero(&ccv, sizeof(ngx_http_compile_complex_value_t));
    ccv.cf = cf;
    ccv.value = &value[2];
    ccv.complex_value = &log->record;

    if (ngx_http_compile_complex_value(&ccv) != NGX_OK) {
        return NGX_CONF_ERROR;
    }

    if (cf->args->nelts == 4) {
        if (ngx_strncmp(value[3].data, "if=", 3) != 0 || value[3].len == 3) {
            ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                               "invalid parameter \"%V\"", &value[3]);
            return NGX_CONF_ERROR;
        }

        condition.data = value[3].data + 3;
        condition.len = value[3].len - 3;

        log->condition = ngx_palloc(cf->pool,
                                    sizeof(ngx_http_complex_value_t));
        if (log->condition == NULL) {
            return NGX_CONF_ERROR;
        }

        ngx_memzero(&ccv, sizeof(ngx_http_compile_complex_value_t));
        ccv.cf = cf;
        ccv.value = &condition;
        ccv.complex_value = log->condition;

        if (ngx_http_compile_complex_value(&ccv) != NGX_OK) {
            return NGX_CONF_ERROR;
        }
    }

    lcf->log = log;

    return NGX_CONF_OK;
}


static void *
ngx_http_gateway_span_log_create_main_conf(ngx_conf_t *cf)
{
    /* peer: NULL */
    return ngx_pcalloc(cf->pool,
                       sizeof(ngx_http_gateway_span_log_main_conf_t));
}


static void *
ngx_http_gateway_span_log_create_loc_conf(ngx_conf_t *cf)
{
    ngx_http_gateway_span_log_loc_conf_t  *conf;

    conf = ngx_palloc(cf->pool, sizeof(ngx_http_gateway_span_log_loc_conf_t));
    if (conf == NULL) {
        return NULL;
    }

    conf->log = NGX_CONF_UNSET_PTR;

    return conf;
}


static char *
ngx_http_gateway_span_log_merge_loc_conf(ngx_conf_t *cf, void *parent,
    void *child)
{
    ngx_http_gateway_span_log_loc_conf_t  *prev = parent;
    ngx_http_gateway_span_log_loc_conf_t  *conf = child;

    ngx_conf_merge_ptr_value(conf->log, prev->log, NULL);

    return NGX_CONF_OK;
}


static ngx_int_t
ngx_http_gateway_span_log_init(ngx_conf_t *cf)
{
    ngx_http_handler_pt                    *h;
    ngx_http_core_main_conf_t              *cmcf;
    ngx_http_gateway_span_log_main_conf_t  *mcf;

    mcf = ngx_http_conf_get_module_main_conf(cf,
                                             ngx_http_gateway_span_log_module);

    /* without the directive, no handler: its cost is nothing */
    if (mcf->peer == NULL) {
        return NGX_OK;
    }

    cmcf = ngx_http_conf_get_module_main_conf(cf, ngx_http_core_module);

    h = ngx_array_push(&cmcf->phases[NGX_HTTP_LOG_PHASE].handlers);
    if (h == NULL) {
        return NGX_ERROR;
    }

    *h = ngx_http_gateway_span_log_handler;

    return NGX_OK;
}


static ngx_int_t
ngx_http_gateway_span_log_init_process(ngx_cycle_t *cycle)
{
    ngx_socket_t                            s;
    ngx_http_gateway_span_log_main_conf_t  *mcf;

    if (ngx_process != NGX_PROCESS_WORKER
        && ngx_process != NGX_PROCESS_SINGLE)
    {
        return NGX_OK;
    }

    mcf = ngx_http_cycle_get_module_main_conf(cycle,
                                              ngx_http_gateway_span_log_module);

    if (mcf == NULL || mcf->peer == NULL) {
        return NGX_OK;
    }

    /* A socket that cannot be made costs the spans, not the worker. */
    s = ngx_socket(mcf->peer->sockaddr->sa_family, SOCK_DGRAM, 0);

    if (s == (ngx_socket_t) -1) {
        ngx_log_error(NGX_LOG_ALERT, cycle->log, ngx_socket_errno,
                      "%s: %s failed", GW_SPAN_LOG_DIRECTIVE, ngx_socket_n);
        return NGX_OK;
    }

    if (ngx_nonblocking(s) == -1
        || connect(s, mcf->peer->sockaddr, mcf->peer->socklen) == -1)
    {
        ngx_log_error(NGX_LOG_ALERT, cycle->log, ngx_socket_errno,
                      "%s: no socket to \"%V\"", GW_SPAN_LOG_DIRECTIVE,
                      &mcf->peer->name);
        (void) ngx_close_socket(s);
        return NGX_OK;
    }

    ngx_http_gateway_span_log_socket = s;
    ngx_http_gateway_span_log_used = 0;

    ngx_http_gateway_span_log_timer_data.fd = (ngx_socket_t) -1;
    ngx_http_gateway_span_log_timer.data = &ngx_http_gateway_span_log_timer_data;
    ngx_http_gateway_span_log_timer.handler = ngx_http_gateway_span_log_on_timer;
    ngx_http_gateway_span_log_timer.log = cycle->log;
    /* a graceful shutdown does not wait for it: exit_process sends the rest */
    ngx_http_gateway_span_log_timer.cancelable = 1;

    return NGX_OK;
}


static void
ngx_http_gateway_span_log_exit_process(ngx_cycle_t *cycle)
{
    if (ngx_http_gateway_span_log_socket == (ngx_socket_t) -1) {
        return;
    }

    ngx_http_gateway_span_log_flush(cycle->log);
    (void) ngx_close_socket(ngx_http_gateway_span_log_socket);
    ngx_http_gateway_span_log_socket = (ngx_socket_t) -1;
}
