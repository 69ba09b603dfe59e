/**
 * What nginx knows of every request before any credential: the methods it passes on, the
 * request id it sends everywhere, how many header lines it reads.
 */

/** Methods the gateway passes on; any other is answered 405 before authentication. */
export const ALLOWED_METHODS: readonly string[] = [
  'GET',
  'HEAD',
  'POST',
  'PUT',
  'PATCH',
  'DELETE',
  'OPTIONS',
];

/**
 * The request id of every request: nginx's own (`$request_id`, 32 hex digits), or the caller's
 * `X-Request-Id` when the caller is a proxy named in `request_id.trusted_proxies` and the id
 * has REQUEST_ID_SHAPE (docs/decisions/20261125-trusted-request-id.md). default.conf's `map`
 * chooses it into `variable`, which is sent to the sidecar and the app under this header,
 * replacing any the caller sent, returned on every answer and written in the access log
 * (docs/decisions/20261123-request-ids-metrics-health.md).
 */
export const REQUEST_ID = {
  header: 'X-Request-Id',
  variable: '$gateway_request_id',
  generated: '$request_id',
} as const;

/**
 * W3C trace context, when settings' tracing is on (docs/decisions/20261202-trace-context.md):
 * the `traceparent` nginx sends the app, management and the sidecar's /auth, naming the
 * gateway's own span as the parent. nginx.conf defines `variable` empty; default.conf's map
 * replaces it while tracing is on. An empty value sends no header.
 */
export const TRACE_CONTEXT = {
  header: 'traceparent',
  variable: '$gateway_traceparent',
} as const;

/**
 * nginx's record of its own span (docs/decisions/20261203-nginx-span-export.md): for each sampled
 * request, the module's `gateway_span_log` (nginx-module/ngx_http_gateway_span_log_module.c)
 * appends `<length>:<record>` to its worker's batch, and a batch of up to `batchBytes` goes to
 * the sidecar as one UDP datagram when full, `flushMs` after its first record, and when the
 * worker exits. A record is nginx's values in `fields` order, separated by one space: ids in hex
 * (the parent empty when nginx started the trace), `end` and `duration` in seconds (ms
 * resolution), the status, the client's auth method and id (percent-encoded as nginx sends it to
 * the app, empty when nobody was authenticated), and last the path without its query, which is
 * the one field that may hold a space.
 */
export const NGINX_SPAN_RECORD = {
  directive: 'gateway_span_log',
  fields: [
    'traceId',
    'spanId',
    'parentId',
    'end',
    'duration',
    'method',
    'status',
    'authMethod',
    'clientId',
    'path',
  ],
  batchBytes: 60_000,
  flushMs: 100,
} as const;

/**
 * The ids kept from a trusted proxy, and the ids the sidecar and the app log: nginx's 32 hex
 * digits fit, and so do a balancer's UUIDs. Nothing that could break a log line or a header.
 */
export const REQUEST_ID_CHARACTERS = '[A-Za-z0-9._-]{1,64}';

export const REQUEST_ID_SHAPE = new RegExp(`^${REQUEST_ID_CHARACTERS}$`);

/** More header lines than this are refused (431) before any credential is looked at. */
export const MAX_REQUEST_HEADERS = 100;
