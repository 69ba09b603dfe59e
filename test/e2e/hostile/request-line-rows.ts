import { CLIENTS, keyed, type Row, raw, row } from './row.js';

const H = 'Host: localhost\r\n';
const long = (n: number) => 'a'.repeat(n);

// Request lines nginx cannot read, or reads and refuses. Where nginx reads a strange but legal
// line (absolute-form, a leading empty line), authentication still applies: 401 without a key.
export const REQUEST_LINE_ROWS: Row[] = [
  row('garbage instead of a request line', 400, 'BAD_REQUEST', 'blah\r\n\r\n'),
  row(
    'a TLS record inside TLS',
    400,
    'BAD_REQUEST',
    '\x16\x03\x01\x00\x05\x01\x02\x03\x04\x05\r\n\r\n',
  ),
  row('NUL bytes as the request line', 400, 'BAD_REQUEST', '\x00\x00\x00\r\n\r\n'),
  row('only a method', 400, 'BAD_REQUEST', 'GET\r\n\r\n'),
  row('no target', 400, 'BAD_REQUEST', `GET HTTP/1.1\r\n${H}\r\n`),
  row('a target without its leading slash', 400, 'BAD_REQUEST', keyed('GET', 'api')),
  row('a tab between method and target', 400, 'BAD_REQUEST', `GET\t/api HTTP/1.1\r\n${H}\r\n`),
  row(
    'junk after the version',
    400,
    'BAD_REQUEST',
    keyed('GET', '/api', { version: 'HTTP/1.1 x' }),
  ),
  row('version HTTP/1.1x', 400, 'BAD_REQUEST', keyed('GET', '/api', { version: 'HTTP/1.1x' })),
  row('version in lower case', 400, 'BAD_REQUEST', keyed('GET', '/api', { version: 'http/1.1' })),
  row(
    'version without a minor number',
    400,
    'BAD_REQUEST',
    keyed('GET', '/api', { version: 'HTTP/1' }),
  ),
  row(
    'version with a leading zero',
    400,
    'BAD_REQUEST',
    keyed('GET', '/api', { version: 'HTTP/01.1' }),
  ),
  row('version HTTP/ alone', 400, 'BAD_REQUEST', keyed('GET', '/api', { version: 'HTTP/' })),
  row(
    'version HTTP/0.9 written out',
    400,
    'BAD_REQUEST',
    keyed('GET', '/api', { version: 'HTTP/0.9' }),
  ),
  row(
    'version HTTP/3.0',
    505,
    'HTTP_VERSION_NOT_SUPPORTED',
    keyed('GET', '/api', { version: 'HTTP/3.0' }),
  ),
  row(
    'version HTTP/2.0 as text',
    505,
    'HTTP_VERSION_NOT_SUPPORTED',
    keyed('GET', '/api', { version: 'HTTP/2.0' }),
  ),
  // nginx parses these as HTTP/1.x with a minor version it has no name for: the access code
  // must refuse them in the one shape (it once compared a nil version: 500 INTERNAL).
  row(
    'version HTTP/1.2',
    505,
    'HTTP_VERSION_NOT_SUPPORTED',
    keyed('GET', '/api', { version: 'HTTP/1.2' }),
  ),
  row(
    'version HTTP/1.9 of a management path',
    505,
    'HTTP_VERSION_NOT_SUPPORTED',
    keyed('GET', CLIENTS, { version: 'HTTP/1.9' }),
  ),
  row(
    'version HTTP/1000.0',
    505,
    'HTTP_VERSION_NOT_SUPPORTED',
    keyed('GET', '/api', { version: 'HTTP/1000.0' }),
  ),
  // No version: nginx reads HTTP/0.9, whose answer is a bare body; the gateway refuses the version.
  row('HTTP/0.9 GET (no version)', 505, 'HTTP_VERSION_NOT_SUPPORTED', 'GET /api\r\n', {
    http09: true,
  }),
  row(
    'HTTP/0.9 GET of a management path',
    505,
    'HTTP_VERSION_NOT_SUPPORTED',
    `GET ${CLIENTS}\r\n`,
    {
      http09: true,
    },
  ),
  row(
    'HTTP/0.9 GET followed by header lines',
    505,
    'HTTP_VERSION_NOT_SUPPORTED',
    `GET /api\r\n${H}\r\n`,
    {
      http09: true,
    },
  ),
  row('HTTP/0.9 POST (0.9 has GET only)', 400, 'BAD_REQUEST', 'POST /api\r\n', { http09: true }),
  row('HTTP/0.9 HEAD', 400, 'BAD_REQUEST', 'HEAD /api\r\n', { http09: true }),
  row(
    'a leading empty line is skipped; no key: 401',
    401,
    'MISSING_CREDENTIALS',
    `\r\n${raw('GET', '/api')}`,
  ),
  row(
    'absolute-form, no key: still authenticated',
    401,
    'MISSING_CREDENTIALS',
    raw('GET', 'https://localhost/api'),
  ),
  row(
    'absolute-form naming another host, no key',
    401,
    'MISSING_CREDENTIALS',
    raw('GET', 'http://evil.example/api'),
  ),
  row(
    'absolute-form with an ftp scheme, no key',
    401,
    'MISSING_CREDENTIALS',
    raw('GET', 'ftp://localhost/api'),
  ),
  row(
    'absolute-form with user info',
    400,
    'BAD_REQUEST',
    keyed('GET', 'https://u:p@localhost/api'),
  ),
  row(
    'absolute-form to an internal path',
    404,
    'NOT_FOUND',
    keyed('GET', 'https://localhost/_auth'),
  ),
  row(
    'absolute-form to an error location',
    404,
    'NOT_FOUND',
    keyed('GET', 'https://localhost/_gateway/errors/500'),
  ),
  row('authority-form with GET', 400, 'BAD_REQUEST', keyed('GET', 'localhost:443')),
  row('authority-form with CONNECT', 400, 'BAD_REQUEST', keyed('CONNECT', 'localhost:443')),
  row('asterisk-form with OPTIONS', 400, 'BAD_REQUEST', keyed('OPTIONS', '*')),
  row('asterisk-form with GET', 400, 'BAD_REQUEST', keyed('GET', '*')),
  row('a 10 KB path', 414, 'URI_TOO_LONG', keyed('GET', `/${long(10_000)}`)),
  row('a 40 KB path, no key', 414, 'URI_TOO_LONG', raw('GET', `/${long(40_000)}`)),
  row('a 10 KB query', 414, 'URI_TOO_LONG', keyed('GET', `/api?${long(10_000)}`)),
  row('a 10 KB management path', 414, 'URI_TOO_LONG', keyed('GET', `${CLIENTS}/${long(10_000)}`)),
  row('NUL in the path', 400, 'BAD_REQUEST', keyed('GET', '/a\x00b')),
  row('SOH in the path', 400, 'BAD_REQUEST', keyed('GET', '/a\x01b')),
  row('ESC in the path', 400, 'BAD_REQUEST', keyed('GET', '/a\x1bb')),
  row('DEL in the path', 400, 'BAD_REQUEST', keyed('GET', '/a\x7fb')),
  row('CR in the path', 400, 'BAD_REQUEST', keyed('GET', '/a\rb')),
  row('a tab in a management path', 400, 'BAD_REQUEST', keyed('GET', '/v1/management/a\tb')),
  row('a space in a management path', 400, 'BAD_REQUEST', keyed('GET', '/v1/management/a b')),
  row('NUL in the query', 400, 'BAD_REQUEST', keyed('GET', '/api?a=\x00')),
  // Raw UTF-8 is not allowed in a request target (RFC 9112 3.2); nginx passes it, and the
  // sidecar's parser refuses it, answering in the one shape.
  row('raw UTF-8 in the path, no key', 401, 'MISSING_CREDENTIALS', raw('GET', '/caf\xc3\xa9')),
  row(
    'raw UTF-8 in a management path',
    400,
    'BAD_REQUEST',
    keyed('GET', '/v1/management/caf\xc3\xa9'),
  ),
  row('raw UTF-8 in a management query', 400, 'BAD_REQUEST', keyed('GET', `${CLIENTS}?x=\xc3\xa9`)),
  row('a raw 0xFF byte in a management path', 400, 'BAD_PATH', keyed('GET', '/v1/management/\xff')),
  row(
    '%-encoded UTF-8 in a management path',
    404,
    'NOT_FOUND',
    keyed('GET', '/v1/management/caf%c3%a9'),
  ),
  // Not UTF-8 once decoded: refused before any credential (BAD_PATH, issue 53).
  row('%FF in a management path', 400, 'BAD_PATH', keyed('GET', '/v1/management/%ff')),
  row('a bad %-escape %zz', 400, 'BAD_REQUEST', keyed('GET', '/api/%zz')),
  row(
    'a bad %-escape in a management path',
    400,
    'BAD_REQUEST',
    keyed('GET', '/v1/management/%zz'),
  ),
  row('a lone % at the end', 400, 'BAD_REQUEST', keyed('GET', '/api%')),
  row('a truncated escape %4', 400, 'BAD_REQUEST', keyed('GET', '/api%4')),
  row('a non-hex escape %g0', 400, 'BAD_REQUEST', keyed('GET', '/%g0')),
  row('%00 in the path', 400, 'BAD_REQUEST', keyed('GET', '/a%00b')),
  row('dot segments above the root', 400, 'BAD_REQUEST', keyed('GET', '/../api')),
  row('encoded dot segments above the root', 400, 'BAD_REQUEST', keyed('GET', '/%2e%2e/api')),
  row(
    'a bad %-escape in a management query is an unknown field',
    400,
    'UNKNOWN_FIELD',
    keyed('GET', `${CLIENTS}?x=%zz`),
  ),
];
