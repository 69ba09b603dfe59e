import { describe, expect, test } from 'vitest';
import { upstreamHeaderVariable } from '../../../common/contract.js';
import { flag, jsonLiteral, quoted, quotedThenVariable } from '../../../generator/nginx-literal.js';

describe('quoted', () => {
  test('wraps safe text in double quotes', () => {
    expect(quoted("a b/c;{}#'")).toBe('"a b/c;{}#\'"');
    expect(quoted('')).toBe('""');
  });

  test.each(['"', '\\', '$x', 'a\nb', 'a\rb'])('refuses %j', (value) => {
    expect(() => quoted(value)).toThrow(
      `refusing to render ${JSON.stringify(value)} into an nginx string`,
    );
  });
});

describe('quotedThenVariable', () => {
  test('appends one nginx variable inside the quotes', () => {
    expect(quotedThenVariable('https://gw', '$request_uri')).toBe('"https://gw$request_uri"');
  });

  test.each(['request_uri', '$Request', '$a;b', '$a b', 'x$a', '$a$b', '$'])(
    'refuses %j as a variable',
    (variable) => {
      expect(() => quotedThenVariable('x', variable)).toThrow(`not an nginx variable: ${variable}`);
    },
  );

  test('still refuses unsafe literal text', () => {
    expect(() => quotedThenVariable('a"', '$b')).toThrow('refusing to render');
  });
});

describe('jsonLiteral', () => {
  test('single-quotes the JSON', () => {
    expect(jsonLiteral({ a: ['b', 1] })).toBe('\'{"a":["b",1]}\'');
  });

  test.each([["it's"], ['$x'], ['a\\b'], ['a\nb'], ['a\rb']])('refuses %j', (text) => {
    expect(() => jsonLiteral({ text })).toThrow('JSON unsafe for an nginx string');
  });
});

describe('flag and header variables', () => {
  test('flags are bare true/false', () => {
    expect(flag(true)).toBe('true');
    expect(flag(false)).toBe('false');
  });

  test("an upstream header's nginx variable", () => {
    expect(upstreamHeaderVariable('X-jwt-Error-Body')).toBe('$upstream_http_x_jwt_error_body');
  });
});
