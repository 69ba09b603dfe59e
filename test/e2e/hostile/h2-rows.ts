import type { OutgoingHttpHeaders } from 'node:http2';
import { CLIENTS } from './row.js';

/** One hostile HTTP/2 request (node:http2 sends only what HPACK can carry) and its answer. */
export interface H2Row {
  name: string;
  headers: OutgoingHttpHeaders;
  /** Add the stack's admin key as `authorization`. */
  key?: boolean;
  body?: string;
  status: number;
  code: string;
}

const post = (headers: OutgoingHttpHeaders): OutgoingHttpHeaders => ({
  ':method': 'POST',
  ':path': CLIENTS,
  'content-type': 'application/json',
  ...headers,
});

export const H2_ROWS: H2Row[] = [
  {
    name: 'an unknown method',
    headers: { ':method': 'FOO', ':path': '/api' },
    key: true,
    status: 405,
    code: 'METHOD_NOT_ALLOWED',
  },
  {
    name: 'TRACE',
    headers: { ':method': 'TRACE', ':path': '/api' },
    key: true,
    status: 405,
    code: 'METHOD_NOT_ALLOWED',
  },
  {
    name: 'a method in lower case',
    headers: { ':method': 'get', ':path': '/api' },
    key: true,
    status: 400,
    code: 'BAD_REQUEST',
  },
  { name: '/_auth', headers: { ':path': '/_auth' }, status: 401, code: 'MISSING_CREDENTIALS' },
  {
    name: '/_gateway/errors/404',
    headers: { ':path': '/_gateway/errors/404' },
    status: 401,
    code: 'MISSING_CREDENTIALS',
  },
  {
    name: '/_gateway/errors/404 with the key',
    headers: { ':path': '/_gateway/errors/404' },
    key: true,
    status: 404,
    code: 'NOT_FOUND',
  },
  {
    name: '/%5Fauth with the key',
    headers: { ':path': '/%5Fauth' },
    key: true,
    status: 404,
    code: 'NOT_FOUND',
  },
  {
    name: '/x/../_auth_admin',
    headers: { ':path': '/x/../_auth_admin' },
    status: 401,
    code: 'MISSING_CREDENTIALS',
  },
  {
    name: 'a path without its slash',
    headers: { ':path': 'api' },
    key: true,
    status: 400,
    code: 'BAD_REQUEST',
  },
  {
    name: 'asterisk-form',
    headers: { ':method': 'OPTIONS', ':path': '*' },
    key: true,
    status: 400,
    code: 'BAD_REQUEST',
  },
  {
    name: 'raw UTF-8 in a management path',
    headers: { ':path': '/v1/management/caf\u00e9' },
    key: true,
    status: 400,
    code: 'BAD_PATH',
  },
  {
    name: '/v1/management without its slash',
    headers: { ':path': '/v1/management' },
    key: true,
    status: 404,
    code: 'NOT_FOUND',
  },
  {
    name: '150 headers',
    headers: {
      ':path': '/api',
      ...Object.fromEntries(Array.from({ length: 150 }, (_, i) => [`x-h${i}`, 'v'])),
    },
    key: true,
    status: 431,
    code: 'HEADERS_TOO_LARGE',
  },
  {
    name: 'a Host that contradicts :authority',
    headers: { ':path': '/api', ':authority': 'localhost', host: 'evil.example' },
    key: true,
    status: 400,
    code: 'BAD_REQUEST',
  },
  {
    name: 'a content-length the body does not match',
    headers: post({ 'content-length': '10' }),
    key: true,
    body: '{}',
    status: 400,
    code: 'BAD_REQUEST',
  },
  {
    name: 'gzip declared, plain JSON sent',
    headers: post({ 'content-encoding': 'gzip' }),
    key: true,
    body: '{}',
    status: 400,
    code: 'INVALID_CONTENT_ENCODING',
  },
  {
    name: 'charset=utf-16',
    headers: post({ 'content-type': 'application/json; charset=utf-16' }),
    key: true,
    body: '{}',
    status: 415,
    code: 'UNSUPPORTED_MEDIA_TYPE',
  },
];
