import { CLIENTS, keyed, type Row, raw, row } from './row.js';

const notAllowed = (method: string, target = '/api') =>
  row(
    `${method.slice(0, 40)} ${target.slice(0, 40)} with the key`,
    405,
    'METHOD_NOT_ALLOWED',
    keyed(method, target),
  );

// Methods outside GET/HEAD/POST/PUT/PATCH/DELETE/OPTIONS are refused before authentication
// (405 with Allow), whatever the path and whatever the key. Methods nginx cannot even read
// (lower case, digits) are malformed request lines: 400.
export const METHOD_ROWS: Row[] = [
  row('TRACE without a key', 405, 'METHOD_NOT_ALLOWED', raw('TRACE', '/api')),
  row(
    'CONNECT with an origin-form target, no key',
    405,
    'METHOD_NOT_ALLOWED',
    raw('CONNECT', '/api'),
  ),
  row('an unknown method without a key', 405, 'METHOD_NOT_ALLOWED', raw('FOO', '/api')),
  ...[
    'TRACE',
    'CONNECT',
    'FOO',
    'PROPFIND',
    'PROPPATCH',
    'MKCOL',
    'COPY',
    'MOVE',
    'LOCK',
    'UNLOCK',
    'SEARCH',
    'REPORT',
    'PURGE',
    'LINK',
    'UNLINK',
    'QUERY',
    'G-ET',
    'GET_X',
    'X'.repeat(5000),
  ].map((method) => notAllowed(method)),
  notAllowed('TRACE', CLIENTS),
  notAllowed('PROPFIND', CLIENTS),
  notAllowed('FOO', '/v1/management/api-clients/1'),
  // A reserved path is checked like any other: the method before the path's 404.
  row('an unknown method on a reserved path', 405, 'METHOD_NOT_ALLOWED', keyed('FOO', '/_auth')),
  // nginx refuses TRACE itself while reading the headers, before any location is chosen.
  row(
    'TRACE on an error location',
    405,
    'METHOD_NOT_ALLOWED',
    keyed('TRACE', '/_gateway/errors/500'),
  ),
  row(
    'a method longer than the request line buffer',
    414,
    'URI_TOO_LONG',
    keyed('X'.repeat(9000), '/api'),
  ),
  row('a method in lower case', 400, 'BAD_REQUEST', keyed('get', '/api')),
  row('a method in mixed case', 400, 'BAD_REQUEST', keyed('Get', '/api')),
  row('a method with a digit', 400, 'BAD_REQUEST', keyed('G1T', '/api')),
  row('a method with a NUL', 400, 'BAD_REQUEST', keyed('GE\x00T', '/api')),
  row('a method of UTF-8 bytes', 400, 'BAD_REQUEST', keyed('G\xc3\x89T', '/api')),
  // Allowed by the gateway, not served by the management route: the sidecar's 405.
  row('OPTIONS on the clients collection', 405, 'METHOD_NOT_ALLOWED', keyed('OPTIONS', CLIENTS)),
  row(
    'PUT on the clients collection',
    405,
    'METHOD_NOT_ALLOWED',
    keyed('PUT', CLIENTS, { body: '' }),
  ),
  row(
    'PATCH on the clients collection',
    405,
    'METHOD_NOT_ALLOWED',
    keyed('PATCH', CLIENTS, { body: '' }),
  ),
  row('DELETE on the clients collection', 405, 'METHOD_NOT_ALLOWED', keyed('DELETE', CLIENTS)),
];
