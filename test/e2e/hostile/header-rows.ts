import { CLIENTS, keyed, manage, type Row, raw, row } from './row.js';

const JSON_TYPE = 'Content-Type: application/json';
const many = (n: number) => Array.from({ length: n }, (_, i) => `X-Filler-${i}: v`);
const big = (name: string, n: number) => `${name}: ${'a'.repeat(n)}`;
const on = (path: string, headers: string[]) => keyed('GET', path, { headers });
const app = (headers: string[]) => on('/api', headers);
const admin = (headers: string[]) => on(CLIENTS, headers);

export const HEADER_ROWS: Row[] = [
  // Control bytes in values: nginx passes most of them; the gateway refuses them itself, before
  // the sidecar's parser could (it would, and the caller would see 503 AUTH_UNAVAILABLE).
  ...[1, 8, 11, 12, 27, 31, 127].map((byte) =>
    row(
      `byte 0x${byte.toString(16)} in a header value`,
      400,
      'BAD_HEADER',
      app([`X-A: a${String.fromCharCode(byte)}b`]),
    ),
  ),
  row(
    'a control byte in a header value, no key',
    400,
    'BAD_HEADER',
    raw('GET', '/api', { headers: ['X-A: a\x01b'] }),
  ),
  row('a control byte in a management header', 400, 'BAD_HEADER', admin(['X-A: a\x01b'])),
  row(
    'a control byte in the Authorization value',
    400,
    'BAD_HEADER',
    raw('GET', CLIENTS, { headers: ['Authorization: apk 1.\x01'] }),
  ),
  row('NUL in a header value', 400, 'BAD_REQUEST', app(['X-A: a\x00b'])),
  row('NUL in a header name', 400, 'BAD_REQUEST', app(['X-\x00A: b'])),
  row('a bare CR in a header value', 400, 'BAD_REQUEST', app(['X-A: a\rb'])),
  row('obs-fold (a continuation line)', 400, 'BAD_REQUEST', app(['X-A: a', '  b'])),
  row('obs-fold on a management request', 400, 'BAD_REQUEST', admin(['X-A: a', '\tb'])),
  row(
    'whitespace before the first header line',
    400,
    'BAD_REQUEST',
    'GET /api HTTP/1.1\r\n Host: localhost\r\n\r\n',
  ),
  row('whitespace between name and colon', 400, 'BAD_REQUEST', app(['X-A : b'])),
  row('an empty header name', 400, 'BAD_REQUEST', app([': b'])),
  // Names that are not tokens: nginx would drop the line and go on; the gateway refuses.
  ...[
    'X A',
    'X(A)',
    'X{A}',
    'X"A"',
    'X/A',
    'X@A',
    'X[A]',
    'X=A',
    'X,A',
    'X;A',
    'X?A',
    'X\\A',
    'X-\xc3\xa9',
  ].map((name) =>
    row(
      `header name ${JSON.stringify(name).replace(/[\x80-\xff]/g, (c) => `\\x${c.charCodeAt(0).toString(16)}`)}`,
      400,
      // A space ends the name for nginx, which then refuses the line itself.
      name === 'X A' ? 'BAD_REQUEST' : 'BAD_HEADER',
      app([`${name}: b`]),
    ),
  ),
  row('a header line without a colon', 400, 'BAD_HEADER', app(['XAb'])),
  row('a header line without a colon, management', 400, 'BAD_HEADER', admin(['XAb'])),
  row('a header name of UTF-8, management', 400, 'BAD_HEADER', admin(['X-\xc3\xa9: b'])),
  row(
    'a header name with a separator, no key',
    400,
    'BAD_HEADER',
    raw('GET', '/api', { headers: ['X(A): b'] }),
  ),
  // Host
  row('HTTP/1.1 without Host', 400, 'BAD_REQUEST', keyed('GET', '/api', { host: null })),
  row('two Host headers', 400, 'BAD_REQUEST', app(['Host: localhost'])),
  row('an empty Host', 400, 'BAD_REQUEST', keyed('GET', '/api', { host: '' })),
  row('a Host with a slash', 400, 'BAD_REQUEST', keyed('GET', '/api', { host: 'a/b' })),
  row('a Host of ..', 400, 'BAD_REQUEST', keyed('GET', '/api', { host: '..' })),
  row('a Host with a space', 400, 'BAD_REQUEST', keyed('GET', '/api', { host: 'a b' })),
  row('a Host with a control byte', 400, 'BAD_REQUEST', keyed('GET', '/api', { host: 'a\x01b' })),
  // Credentials: two, or malformed ones, never reach a decision.
  row('two Authorization headers', 400, 'BAD_REQUEST', app(['Authorization: apk 1.x'])),
  row(
    'two Authorization headers, management',
    400,
    'BAD_REQUEST',
    admin(['Authorization: apk 1.x']),
  ),
  row(
    'an empty Authorization',
    401,
    'MALFORMED_CREDENTIALS',
    raw('GET', CLIENTS, { headers: ['Authorization: '] }),
  ),
  row(
    'a scheme without a credential',
    401,
    'MALFORMED_CREDENTIALS',
    raw('GET', '/api', { headers: ['Authorization: apk'] }),
  ),
  // A refused bearer attempt says why in X-jwt-error, however malformed, even with OIDC off
  // (this stack's default).
  ...[
    ['Bearer with nothing after it', 'Bearer ', 'missing token'],
    ['Bearer with only spaces after it', 'Bearer     ', 'missing token'],
    ['bearer alone, lower case', 'bearer', 'missing token'],
    ['BEARER alone, upper case', 'BEARER', 'missing token'],
    ['Bearer with two words', 'Bearer a b', 'malformed Authorization header'],
  ].map(([name, value, jwtError]) =>
    row(
      name!,
      401,
      'MALFORMED_CREDENTIALS',
      raw('GET', CLIENTS, { headers: [`Authorization: ${value}`] }),
      { headers: { 'x-jwt-error': jwtError! } },
    ),
  ),
  row(
    'a well-formed bearer token while OpenID Connect is off',
    401,
    'METHOD_DISABLED',
    raw('GET', '/api', { headers: ['Authorization: Bearer abc.def.ghi'] }),
    { headers: { 'x-jwt-error': 'bearer tokens are disabled' } },
  ),
  row(
    'an API key without its secret',
    401,
    'MALFORMED_CREDENTIALS',
    raw('GET', CLIENTS, { headers: ['Authorization: apk 1.x'] }),
  ),
  row(
    'an API key of UTF-8',
    401,
    'MALFORMED_CREDENTIALS',
    raw('GET', '/api', { headers: ['Authorization: apk 1.\xc3\xa9'] }),
  ),
  row(
    'Basic credentials',
    401,
    'UNSUPPORTED_SCHEME',
    raw('GET', CLIENTS, { headers: ['Authorization: Basic dXNlcjpwYXNz'] }),
  ),
  row(
    'an unknown key id',
    401,
    'INVALID_API_KEY',
    raw('GET', CLIENTS, { headers: [`Authorization: apk 999.${'A'.repeat(43)}`] }),
  ),
  row(
    'a wrong secret',
    401,
    'INVALID_API_KEY',
    raw('GET', CLIENTS, { headers: [`Authorization: apk 1.${'A'.repeat(43)}`] }),
  ),
  // Size
  row('one 10 KB header', 431, 'HEADERS_TOO_LARGE', app([big('X-A', 10_000)])),
  row('a 10 KB header name', 431, 'HEADERS_TOO_LARGE', app([`${'X'.repeat(10_000)}: v`])),
  row(
    'a 10 KB Authorization, no other key',
    431,
    'HEADERS_TOO_LARGE',
    raw('GET', '/api', { headers: [`Authorization: apk 1.${'a'.repeat(10_000)}`] }),
  ),
  row(
    'headers over 32 KB in all',
    431,
    'HEADERS_TOO_LARGE',
    app([1, 2, 3, 4, 5].map((i) => big(`X-B${i}`, 7000))),
  ),
  row('101 headers', 431, 'HEADERS_TOO_LARGE', app(many(99))),
  row('1000 headers', 431, 'HEADERS_TOO_LARGE', app(many(1000))),
  row('101 headers, no key', 431, 'HEADERS_TOO_LARGE', raw('GET', '/api', { headers: many(100) })),
  // Framing of the body
  row(
    'Content-Length and Transfer-Encoding',
    400,
    'BAD_REQUEST',
    manage([JSON_TYPE, 'Content-Length: 5', 'Transfer-Encoding: chunked'], '2\r\n{}\r\n0\r\n\r\n', {
      length: false,
    }),
  ),
  ...['abc', '-1', '+2', '0x2', '2, 2', '', '99999999999999999999'].map((value) =>
    row(
      `Content-Length ${JSON.stringify(value)}`,
      400,
      'BAD_REQUEST',
      manage([JSON_TYPE, `Content-Length: ${value}`], '{}', { length: false }),
    ),
  ),
  row(
    'two different Content-Lengths',
    400,
    'BAD_REQUEST',
    manage([JSON_TYPE, 'Content-Length: 2', 'Content-Length: 3'], '{}', { length: false }),
  ),
  row(
    'two equal Content-Lengths',
    400,
    'BAD_REQUEST',
    manage([JSON_TYPE, 'Content-Length: 2', 'Content-Length: 2'], '{}', { length: false }),
  ),
  row(
    'Content-Length over the 1 MB limit',
    413,
    'PAYLOAD_TOO_LARGE',
    manage([JSON_TYPE, 'Content-Length: 2000000'], '', { length: false }),
  ),
  row(
    'Content-Length over the limit, no key',
    413,
    'PAYLOAD_TOO_LARGE',
    raw('POST', '/api', { headers: ['Content-Length: 1000000000'] }),
  ),
  ...['gzip', 'gzip, chunked', 'identity', 'chunked, chunked', ''].map((coding) =>
    row(
      `Transfer-Encoding ${JSON.stringify(coding)}`,
      501,
      'NOT_IMPLEMENTED',
      manage([JSON_TYPE, `Transfer-Encoding: ${coding}`], '2\r\n{}\r\n0\r\n\r\n', {
        length: false,
      }),
    ),
  ),
  row(
    'two Transfer-Encoding headers',
    400,
    'BAD_REQUEST',
    manage(
      [JSON_TYPE, 'Transfer-Encoding: chunked', 'Transfer-Encoding: chunked'],
      '2\r\n{}\r\n0\r\n\r\n',
      { length: false },
    ),
  ),
  row(
    'Transfer-Encoding in HTTP/1.0',
    400,
    'BAD_REQUEST',
    manage([JSON_TYPE, 'Transfer-Encoding: chunked'], '2\r\n{}\r\n0\r\n\r\n', {
      length: false,
      version: 'HTTP/1.0',
    }),
  ),
  row(
    'a chunk size that is not hex',
    400,
    'BAD_REQUEST',
    manage([JSON_TYPE, 'Transfer-Encoding: chunked'], 'zz\r\n{}\r\n0\r\n\r\n', { length: false }),
  ),
  row(
    'a negative chunk size',
    400,
    'BAD_REQUEST',
    manage([JSON_TYPE, 'Transfer-Encoding: chunked'], '-2\r\n{}\r\n0\r\n\r\n', { length: false }),
  ),
  row(
    'a chunk size past 64 bits',
    400,
    'BAD_REQUEST',
    manage([JSON_TYPE, 'Transfer-Encoding: chunked'], 'fffffffffffffffffff\r\n{}\r\n0\r\n\r\n', {
      length: false,
    }),
  ),
  row(
    'a chunk over the 1 MB limit',
    413,
    'PAYLOAD_TOO_LARGE',
    manage([JSON_TYPE, 'Transfer-Encoding: chunked'], `200000\r\n${'a'.repeat(100)}`, {
      length: false,
    }),
  ),
  // Expect: the gateway answers what it can before the body; 100 only when it will read it.
  row(
    'Expect: 100-continue without a key',
    401,
    'MISSING_CREDENTIALS',
    raw('POST', '/api', { headers: ['Content-Length: 5', 'Expect: 100-continue'] }),
    { interim: [100] },
  ),
  row(
    'Expect: 100-continue over the size limit',
    413,
    'PAYLOAD_TOO_LARGE',
    manage([JSON_TYPE, 'Content-Length: 5000000', 'Expect: 100-continue'], '', { length: false }),
  ),
  row(
    'Expect: 100-continue, then invalid JSON',
    400,
    'INVALID_JSON',
    manage([JSON_TYPE, 'Expect: 100-continue'], '{x'),
    { interim: [100] },
  ),
  row(
    'an unknown expectation is ignored',
    400,
    'INVALID_JSON',
    manage([JSON_TYPE, 'Expect: something'], '{x'),
  ),
];
