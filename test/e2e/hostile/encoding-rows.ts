import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { manage, type Row, row } from './row.js';

const JSON_TYPE = 'Content-Type: application/json';
const latin1 = (bytes: Buffer) => bytes.toString('latin1');
const gzip = (text: string) => latin1(gzipSync(Buffer.from(text)));
const coded = (coding: string, body: string, type = JSON_TYPE) =>
  manage([type, `Content-Encoding: ${coding}`], body);
const typed = (type: string, body: string) => manage([`Content-Type: ${type}`], body);
const json = (body: string) => manage([JSON_TYPE], body);
// Decompresses to 200 KB of spaces: past the 64 KiB body limit, which counts decoded bytes.
const BOMB = latin1(gzipSync(Buffer.alloc(200_000, 32)));

// Management POSTs with the admin key, so each reaches the sidecar's body reader.
export const ENCODING_ROWS: Row[] = [
  // A body that does not decode as its Content-Encoding says: the caller's mistake, 400.
  row('gzip declared, plain JSON sent', 400, 'INVALID_CONTENT_ENCODING', coded('gzip', '{}')),
  row('br declared, plain JSON sent', 400, 'INVALID_CONTENT_ENCODING', coded('br', '{}')),
  row('deflate declared, plain JSON sent', 400, 'INVALID_CONTENT_ENCODING', coded('deflate', '{}')),
  row('GZIP in upper case, plain JSON sent', 400, 'INVALID_CONTENT_ENCODING', coded('GZIP', '{}')),
  row(
    'gzip cut short',
    400,
    'INVALID_CONTENT_ENCODING',
    coded('gzip', gzip('{"name":"x"}').slice(0, 12)),
  ),
  row(
    'gzip declared, deflate sent',
    400,
    'INVALID_CONTENT_ENCODING',
    coded('gzip', latin1(deflateSync('{}'))),
  ),
  row('br declared, gzip sent', 400, 'INVALID_CONTENT_ENCODING', coded('br', gzip('{}'))),
  row(
    'deflate declared, brotli sent',
    400,
    'INVALID_CONTENT_ENCODING',
    coded('deflate', latin1(brotliCompressSync('{}'))),
  ),
  row(
    'gzip with random bytes after the header',
    400,
    'INVALID_CONTENT_ENCODING',
    coded('gzip', `\x1f\x8b\x08\x00${'\xff'.repeat(20)}`),
  ),
  // Well-formed compression: the JSON inside is what is judged.
  row('valid gzip of invalid JSON', 400, 'INVALID_JSON', coded('gzip', gzip('{x'))),
  row('valid gzip of an empty object', 400, 'MISSING_FIELD', coded('gzip', gzip('{}'))),
  row(
    'valid br of invalid JSON',
    400,
    'INVALID_JSON',
    coded('br', latin1(brotliCompressSync('{x'))),
  ),
  row('gzip decoding past the 64 KiB limit', 413, 'PAYLOAD_TOO_LARGE', coded('gzip', BOMB)),
  // Codings the sidecar does not read: 415 (RFC 9110 15.5.16).
  ...['x-gzip', 'compress', 'zstd', 'foo', 'gzip, br'].map((coding) =>
    row(
      `Content-Encoding ${JSON.stringify(coding)}`,
      415,
      'UNSUPPORTED_MEDIA_TYPE',
      coded(coding, '{}'),
    ),
  ),
  // Not JSON
  row('an unquoted key', 400, 'INVALID_JSON', json('{abc}')),
  row('two objects', 400, 'INVALID_JSON', json('{}{}')),
  row('a trailing comma', 400, 'INVALID_JSON', json('{"name":"x",}')),
  row('single quotes', 400, 'INVALID_JSON', json("{'name':'x'}")),
  row('NaN', 400, 'INVALID_JSON', json('{"is_admin":NaN}')),
  row('a truncated object', 400, 'INVALID_JSON', json('{"name":')),
  row('whitespace only', 400, 'INVALID_JSON', json('   ')),
  row('an empty body', 400, 'INVALID_BODY', json('')),
  row('no body and no length', 400, 'INVALID_BODY', manage([JSON_TYPE], '', { length: false })),
  row('a JSON array', 400, 'INVALID_BODY', json('[]')),
  row('JSON null', 400, 'INVALID_BODY', json('null')),
  row('a JSON number', 400, 'INVALID_BODY', json('42')),
  row(
    '30000 nested arrays',
    400,
    'INVALID_BODY',
    json(`${'['.repeat(30_000)}${']'.repeat(30_000)}`),
  ),
  row('a body over 64 KiB', 413, 'PAYLOAD_TOO_LARGE', json(`{"name":"${'a'.repeat(70_000)}"}`)),
  // Charsets: JSON is UTF-8 (RFC 8259 8.1); anything else is refused, never guessed at.
  row(
    'charset=latin1',
    415,
    'UNSUPPORTED_MEDIA_TYPE',
    typed('application/json; charset=latin1', '{}'),
  ),
  row(
    'charset=utf-16',
    415,
    'UNSUPPORTED_MEDIA_TYPE',
    typed('application/json; charset=utf-16', '{}'),
  ),
  row(
    'charset=utf-32',
    415,
    'UNSUPPORTED_MEDIA_TYPE',
    typed('application/json; charset=utf-32', '{}'),
  ),
  row(
    'charset=UTF8 (no dash)',
    415,
    'UNSUPPORTED_MEDIA_TYPE',
    typed('application/json; charset=UTF8', '{}'),
  ),
  row('an empty charset', 415, 'UNSUPPORTED_MEDIA_TYPE', typed('application/json; charset=', '{}')),
  row('a latin-1 byte in a UTF-8 body', 400, 'INVALID_JSON', json('{"name":"caf\xe9"}')),
  row('an overlong UTF-8 sequence', 400, 'INVALID_JSON', json('{"name":"\xc0\xaf"}')),
  row('a UTF-8 encoded surrogate', 400, 'INVALID_JSON', json('{"name":"\xed\xa0\x80"}')),
  row('a truncated UTF-8 sequence', 400, 'INVALID_JSON', json('{"name":"\xe2\x82"}')),
  row(
    'charset="UTF-8" (quoted) is UTF-8',
    400,
    'MISSING_FIELD',
    typed('application/json; charset="UTF-8"', '{}'),
  ),
  // Media types
  row('text/plain', 415, 'UNSUPPORTED_MEDIA_TYPE', typed('text/plain', '{}')),
  row('application/jsonx', 415, 'UNSUPPORTED_MEDIA_TYPE', typed('application/jsonx', '{}')),
  row(
    'a form body',
    415,
    'UNSUPPORTED_MEDIA_TYPE',
    typed('application/x-www-form-urlencoded', 'name=x'),
  ),
  row('multipart', 415, 'UNSUPPORTED_MEDIA_TYPE', typed('multipart/form-data; boundary=x', '{}')),
  row('no Content-Type', 415, 'UNSUPPORTED_MEDIA_TYPE', manage([], '{}')),
];
