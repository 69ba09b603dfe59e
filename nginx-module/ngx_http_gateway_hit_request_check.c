/*
 * The request's headers, screened as lua/gateway/request_check.lua screens them
 * or stricter, by the pure screens of ngx_http_gateway_hit_screen.c: this file
 * finds the bytes nginx left for them, per HTTP version.
 */
#include "ngx_http_gateway_hit_module.h"


#if (NGX_HTTP_V2)
static ngx_flag_t ngx_http_gateway_hit_clean_decoded(ngx_http_request_t *r);
#endif


/* The request's headers, screened as lua/gateway/request_check.lua screens them
 * or stricter: HTTP/1's raw block (ngx_http_gateway_hit_screen_block), HTTP/2's
 * decoded headers (HPACK has no lines to screen: at most GW_MAX_HEADERS, no
 * control byte but tab in a value; a field whose name nginx does not take,
 * `x.a`, `x_a`, `x(a` or a byte over 0x7f, it dropped without a word, and a
 * name with upper case it refused). A block in nginx's large header buffers,
 * and any other version, is Lua's. */
ngx_flag_t
ngx_http_gateway_hit_clean_headers(ngx_http_request_t *r)
{
    ngx_buf_t  *b;

    if (r->http_version == NGX_HTTP_VERSION_10
        || r->http_version == NGX_HTTP_VERSION_11)
    {
        b = r->header_in;
        if (b == NULL || r->request_line.data < b->start
            || r->request_line.data >= b->pos || b->pos > b->last)
        {
            return 0;
        }

        return ngx_http_gateway_hit_screen_block(r->request_line.data
                                                 + r->request_line.len,
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
            || !ngx_http_gateway_hit_screen_value(h[i].value.data,
                                                  h[i].value.len))
        {
            return 0;
        }
    }
}

#endif
