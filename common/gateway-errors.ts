/**
 * The answers nginx gives itself (not the sidecar's, not the app's), in the one error shape
 * `{"errors":[{code,message}]}`. Rendered into default.conf's error locations and generated
 * into the Lua contract, so both say exactly the same.
 */
export interface GatewayAnswer {
  status: number;
  code: string;
  message: string;
}

/** nginx's own error statuses → the JSON answer; `answerStatus` when nginx's code is internal. */
export const NGINX_ERROR_PAGES: ReadonlyArray<GatewayAnswer & { nginxStatus: number }> = [
  {
    nginxStatus: 400,
    status: 400,
    code: 'BAD_REQUEST',
    message: 'The request is malformed (for example a repeated Authorization header).',
  },
  { nginxStatus: 404, status: 404, code: 'NOT_FOUND', message: 'No such path on this gateway.' },
  {
    nginxStatus: 405,
    status: 405,
    code: 'METHOD_NOT_ALLOWED',
    message: 'This method is not allowed.',
  },
  { nginxStatus: 408, status: 408, code: 'REQUEST_TIMEOUT', message: 'The request took too long.' },
  {
    nginxStatus: 411,
    status: 411,
    code: 'LENGTH_REQUIRED',
    message: 'The request body needs a Content-Length.',
  },
  {
    nginxStatus: 413,
    status: 413,
    code: 'PAYLOAD_TOO_LARGE',
    message: 'The request body is too large.',
  },
  { nginxStatus: 414, status: 414, code: 'URI_TOO_LONG', message: 'The request URI is too long.' },
  // nginx's internal 494 "request header too large" is answered with the standard 431.
  {
    nginxStatus: 494,
    status: 431,
    code: 'HEADERS_TOO_LARGE',
    message: 'The request headers are too large.',
  },
  // 497: plain HTTP sent to the HTTPS port.
  {
    nginxStatus: 497,
    status: 400,
    code: 'HTTPS_REQUIRED',
    message: 'This port speaks HTTPS only.',
  },
  { nginxStatus: 500, status: 500, code: 'INTERNAL', message: 'Internal error.' },
  {
    nginxStatus: 501,
    status: 501,
    code: 'NOT_IMPLEMENTED',
    message:
      'The request uses a feature this gateway does not implement (for example a transfer encoding).',
  },
  {
    nginxStatus: 502,
    status: 502,
    code: 'UPSTREAM_UNAVAILABLE',
    message: 'The service behind the gateway is unavailable; try again later.',
  },
  {
    nginxStatus: 503,
    status: 503,
    code: 'AUTH_UNAVAILABLE',
    message: 'The authentication service is unavailable; try again later.',
  },
  {
    nginxStatus: 504,
    status: 504,
    code: 'UPSTREAM_TIMEOUT',
    message: 'The service behind the gateway did not answer in time; try again later.',
  },
  {
    nginxStatus: 505,
    status: 505,
    code: 'HTTP_VERSION_NOT_SUPPORTED',
    message: 'This HTTP version is not supported.',
  },
];

/** Answers the Lua access code gives itself. */
export const LUA_ANSWERS = {
  badHeader: {
    status: 400,
    code: 'BAD_HEADER',
    message: 'A request header contains control characters.',
  },
  // nginx drops a header line whose name is not a token (or takes a line without a colon as an
  // empty header) and passes the request on; the sender meant something the gateway never saw.
  badHeaderLine: {
    status: 400,
    code: 'BAD_HEADER',
    message: 'A request header line is malformed (it needs a token name, then a colon).',
  },
  // HTTP/0.9 has no headers, so no credential; its answer has no status line, only this body.
  httpVersionNotSupported: {
    status: 505,
    code: 'HTTP_VERSION_NOT_SUPPORTED',
    message: 'This HTTP version is not supported.',
  },
  tooManyHeaders: {
    status: 431,
    code: 'HEADERS_TOO_LARGE',
    message: 'The request has too many headers.',
  },
  methodNotAllowed: {
    status: 405,
    code: 'METHOD_NOT_ALLOWED',
    message: 'This method is not allowed.',
  },
  unauthorized: { status: 401, code: 'UNAUTHORIZED', message: 'Authentication is required.' },
  forbidden: {
    status: 403,
    code: 'FORBIDDEN',
    message: 'The credential does not allow this request.',
  },
  authUnavailable: {
    status: 503,
    code: 'AUTH_UNAVAILABLE',
    message: 'The authentication service is unavailable; try again later.',
  },
  // A request without any credential, refused by nginx itself (as the sidecar words it).
  missingCredentials: {
    status: 401,
    code: 'MISSING_CREDENTIALS',
    message: 'The request carries no Authorization header.',
  },
  // The two API-key refusals nginx decides itself from a key record: word for word the
  // sidecar's (it builds its own from these), so a caller cannot tell who refused.
  invalidApiKey: { status: 401, code: 'INVALID_API_KEY', message: 'The API key is not valid.' },
  apiClientExpired: {
    status: 401,
    code: 'API_CLIENT_EXPIRED',
    message: 'The API client has expired.',
  },
  // Past a failure budget (per claimed key id, per source address): answered without asking.
  tooManyFailures: {
    status: 429,
    code: 'TOO_MANY_FAILED_ATTEMPTS',
    message: 'Too many failed authentication attempts; retry after the time in Retry-After.',
  },
  // The client's permissions allow no rule for this method and path (docs/decisions/
  // 20261128-permissions.md). The Lua code names the client whose rules refused (its row,
  // digits) in the message; never the path the caller sent.
  permissionDenied: {
    status: 403,
    code: 'PERMISSION_DENIED',
    message: "The API client's permissions do not allow this method on this path.",
  },
  // A restricted client's path that could reach the application as another path; the Lua code
  // adds why (common/permissions.ts AMBIGUOUS_PATH_REASONS), never the path itself.
  ambiguousPath: {
    status: 400,
    code: 'AMBIGUOUS_PATH',
    message:
      'The path could reach the application as another path; a client with permissions must send it plainly.',
  },
  // Any caller's path with a segment of dots and spaces only once decoded ("..%20", "..."), or
  // bytes that are not UTF-8 once decoded: refused before any credential (docs/decisions/
  // 20261201-override-headers-and-dot-segments.md).
  badPath: {
    status: 400,
    code: 'BAD_PATH',
    message:
      'The path holds a segment of dots and spaces only, or bytes that are not UTF-8, once percent-decoded.',
  },
  // Past the client's own rate limit (its record's rate_limit), counted in nginx's memory.
  rateLimited: {
    status: 429,
    code: 'RATE_LIMITED',
    message: "The API client's rate limit is reached; retry after the time in Retry-After.",
  },
  // rate_limits.redis.on_failure closed: the fleet's counts cannot be known (Redis away, or the
  // sidecar not synced yet), so no request of a rate-limited client passes
  // (docs/decisions/20261202-global-rate-limits.md). 503, not 429: the client did not overrun.
  rateLimitStoreUnreachable: {
    status: 503,
    code: 'RATE_LIMIT_STORE_UNREACHABLE',
    message:
      "The API client's rate limit cannot be counted right now (its store is unreachable); retry after the time in Retry-After.",
  },
} as const satisfies Record<string, GatewayAnswer>;

/** The JSON body of an answer. */
export function answerBody(answer: Pick<GatewayAnswer, 'code' | 'message'>): string {
  return JSON.stringify({ errors: [{ code: answer.code, message: answer.message }] });
}
