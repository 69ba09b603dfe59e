import { CLIENTS, keyed, type Row, raw, row } from './row.js';

// Spellings that nginx normalises (decodes %XX, merges slashes, resolves dot segments) to one of
// the gateway's reserved paths (its error locations included): authenticated like any path, so
// 401 without a key, and the JSON 404 with one.
const INTERNAL_SPELLINGS = [
  '/_auth',
  '/_auth_admin',
  '/_gateway/',
  '/_gateway/errors/404',
  '/_gateway/errors/500',
  '/_gateway/anything',
  '/_auth?x=1',
  '/_auth#frag',
  '/%5Fauth',
  '/%5fauth',
  '/%5F%61uth_admin',
  '/_auth%5Fadmin',
  '/%5Fgateway/errors/500',
  '/_gateway%2Ferrors%2F500',
  '/./_auth',
  '/%2e/_auth',
  '/x/../_auth',
  '/x/%2e%2e/_auth',
  '/x/..%2f_auth',
  '/_gateway/../_auth',
  '//_auth',
  '///_auth_admin',
  '//_gateway//errors//500',
  '/v1/management/../../_auth',
  '/v1/management/%2e%2e/%2e%2e/_auth_admin',
];

export const PATH_ROWS: Row[] = [
  ...INTERNAL_SPELLINGS.map((path) =>
    row(`${path}, no key`, 401, 'MISSING_CREDENTIALS', raw('GET', path)),
  ),
  ...INTERNAL_SPELLINGS.map((path) =>
    row(`${path} with the admin key`, 404, 'NOT_FOUND', keyed('GET', path)),
  ),
  row(
    'an error location with a wrong key',
    401,
    'INVALID_API_KEY',
    raw('GET', '/_gateway/errors/500', { headers: [`Authorization: apk 1.${'A'.repeat(43)}`] }),
  ),
  row('POST to /_auth with a body', 404, 'NOT_FOUND', keyed('POST', '/_auth', { body: '{}' })),
  row('DELETE /_auth_admin', 404, 'NOT_FOUND', keyed('DELETE', '/_auth_admin')),
  row('%00 after an internal path', 400, 'BAD_REQUEST', raw('GET', '/_auth%00')),
  row('a raw NUL after an internal path', 400, 'BAD_REQUEST', raw('GET', '/_auth\x00')),
  row(
    'dot segments above the root to an internal path',
    400,
    'BAD_REQUEST',
    raw('GET', '/../_auth'),
  ),
  // Not an internal path once decoded: an ordinary app path, so authentication applies.
  row('/_auth/ (a different path), no key', 401, 'MISSING_CREDENTIALS', raw('GET', '/_auth/')),
  row('/_auth%2F decodes to /_auth/, no key', 401, 'MISSING_CREDENTIALS', raw('GET', '/_auth%2F')),
  row(
    '/_auth%3Fx: an encoded ? stays in the path, no key',
    401,
    'MISSING_CREDENTIALS',
    raw('GET', '/_auth%3Fx'),
  ),
  row('/_auth;x, no key', 401, 'MISSING_CREDENTIALS', raw('GET', '/_auth;x')),
  row(
    '/_AUTH (paths are case-sensitive), no key',
    401,
    'MISSING_CREDENTIALS',
    raw('GET', '/_AUTH'),
  ),
  row('/_gateway without its slash, no key', 401, 'MISSING_CREDENTIALS', raw('GET', '/_gateway')),
  // Management: the prefix without its slash is nothing (nginx would redirect it, in HTML), but
  // it is management's: an admin, then the JSON 404.
  row(
    '/v1/management without its slash, with the key',
    404,
    'NOT_FOUND',
    keyed('GET', '/v1/management'),
  ),
  row(
    '/v1/management without its slash, no key',
    401,
    'MISSING_CREDENTIALS',
    raw('GET', '/v1/management'),
  ),
  row(
    'POST /v1/management without its slash, no key',
    401,
    'MISSING_CREDENTIALS',
    raw('POST', '/v1/management', { body: '{}' }),
  ),
  row(
    'POST /v1/management without its slash',
    404,
    'NOT_FOUND',
    keyed('POST', '/v1/management', { body: '{}' }),
  ),
  row('the management prefix itself', 404, 'NOT_FOUND', keyed('GET', '/v1/management/')),
  row(
    'a management path with dot segments',
    404,
    'NOT_FOUND',
    keyed('GET', `/x/../${CLIENTS.slice(1)}`),
  ),
  row(
    'a management path reached via /auth/..',
    404,
    'NOT_FOUND',
    keyed('GET', `/auth/..${CLIENTS}`),
  ),
  row(
    'a management path with doubled slashes',
    404,
    'NOT_FOUND',
    keyed('GET', '//v1//management//api-clients'),
  ),
  row(
    'a management path with dot segments, no key',
    401,
    'MISSING_CREDENTIALS',
    raw('GET', `/x/..${CLIENTS}`),
  ),
  row(
    'a management path with quotes and braces',
    404,
    'NOT_FOUND',
    keyed('GET', '/v1/management/"{x}"'),
  ),
  row('a management path with a backslash', 404, 'NOT_FOUND', keyed('GET', '/v1/management/a\\b')),
  // Resolves to /healthz, an app path: authenticated like any other, never the sidecar's own.
  row(
    'the sidecar health check through management, no key',
    401,
    'MISSING_CREDENTIALS',
    raw('GET', '/v1/management/../../healthz'),
  ),
  row(
    'an unknown management query parameter',
    400,
    'UNKNOWN_FIELD',
    keyed('GET', `${CLIENTS}?admin=true`),
  ),
  row('DELETE of a non-numeric id', 400, 'INVALID_ID', keyed('DELETE', `${CLIENTS}/abc`)),
  row('DELETE of id 0', 400, 'INVALID_ID', keyed('DELETE', `${CLIENTS}/0`)),
  row('DELETE of a negative id', 400, 'INVALID_ID', keyed('DELETE', `${CLIENTS}/-1`)),
  row('DELETE of a fractional id', 400, 'INVALID_ID', keyed('DELETE', `${CLIENTS}/1.5`)),
  row('DELETE of an exponent id', 400, 'INVALID_ID', keyed('DELETE', `${CLIENTS}/1e3`)),
  row('DELETE of a hex id', 400, 'INVALID_ID', keyed('DELETE', `${CLIENTS}/0x1`)),
  row(
    'DELETE of an id with an encoded space',
    400,
    'INVALID_ID',
    keyed('DELETE', `${CLIENTS}/%201`),
  ),
  row(
    'DELETE of an id past 64 bits',
    400,
    'INVALID_ID',
    keyed('DELETE', `${CLIENTS}/99999999999999999999999`),
  ),
  row(
    'DELETE of an id that does not exist',
    404,
    'NOT_FOUND',
    keyed('DELETE', `${CLIENTS}/999999`),
  ),
];
