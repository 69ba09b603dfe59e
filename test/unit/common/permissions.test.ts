import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { ALLOWED_METHODS } from '../../../common/contract.js';
import {
  allows,
  decidePath,
  describePermissions,
  MAX_RULES,
  patternMatches,
  patternProblem,
  utf8Bytes,
  validatePermissions,
} from '../../../common/permissions.js';

const RUNS = 2_000;

describe('validatePermissions', () => {
  test('null and an empty list are permissions (everything; nothing)', () => {
    expect(validatePermissions(null)).toEqual({ ok: true, permissions: null });
    expect(validatePermissions([])).toEqual({ ok: true, permissions: [] });
  });

  test('a valid list comes back with each rule’s methods in the gateway’s order', () => {
    const check = validatePermissions([
      { methods: ['DELETE', 'GET'], path: '/resources/json/**' },
      { methods: ['POST'], path: '/' },
    ]);
    expect(check).toEqual({
      ok: true,
      permissions: [
        { methods: ['GET', 'DELETE'], path: '/resources/json/**' },
        { methods: ['POST'], path: '/' },
      ],
    });
  });

  test.each([
    ['a string', 'GET /x', 'permissions must be a list of rules, or null'],
    ['an object', { methods: ['GET'], path: '/' }, 'permissions must be a list of rules, or null'],
  ])('not a list (%s): one problem about the whole value', (_, value, message) => {
    expect(validatePermissions(value)).toEqual({
      ok: false,
      problems: [{ rule: null, field: 'permissions', message }],
    });
  });

  test(`more than ${MAX_RULES} rules are refused; exactly ${MAX_RULES} are not`, () => {
    const rule = { methods: ['GET'], path: '/x' };
    expect(validatePermissions(Array(MAX_RULES).fill(rule)).ok).toBe(true);
    const check = validatePermissions(Array(MAX_RULES + 1).fill(rule));
    expect(check).toEqual({
      ok: false,
      problems: [
        {
          rule: null,
          field: 'permissions',
          message: `permissions must have at most ${MAX_RULES} rules (it has ${MAX_RULES + 1})`,
        },
      ],
    });
  });

  test.each([
    [{ methods: ['GET'], path: 'x' }, 'path', 'must be an absolute path'],
    [{ methods: ['GET'], path: '' }, 'path', 'must be an absolute path'],
    [{ methods: ['GET'], path: '/a//b' }, 'path', 'empty segment'],
    [{ methods: ['GET'], path: '/a/' }, 'path', 'empty segment'],
    [{ methods: ['GET'], path: '/a/../b' }, 'path', '. or ..'],
    [{ methods: ['GET'], path: '/./b' }, 'path', '. or ..'],
    [{ methods: ['GET'], path: '/a/**/b' }, 'path', 'only as its last segment'],
    [{ methods: ['GET'], path: '/a*' }, 'path', 'never inside a segment'],
    [{ methods: ['GET'], path: '/a/***' }, 'path', 'never inside a segment'],
    [{ methods: ['GET'], path: '/a%2Fb' }, 'path', 'no %'],
    [{ methods: ['GET'], path: '/a;b' }, 'path', 'no %, ;'],
    [{ methods: ['GET'], path: '/a?b' }, 'path', 'segment'],
    [{ methods: ['GET'], path: '/a b' }, 'path', 'segment'],
    [{ methods: ['GET'], path: '/a\\b' }, 'path', 'segment'],
    [{ methods: ['GET'], path: '/a\u0000' }, 'path', 'segment'],
    [{ methods: ['GET'], path: '/a\u202e' }, 'path', 'segment'],
    [{ methods: ['GET'], path: `/${'a'.repeat(255)}` }, 'path', 'at most 255 bytes'],
    [{ methods: ['GET'], path: `/${'é'.repeat(128)}` }, 'path', 'at most 255 bytes'],
    [{ methods: ['GET'], path: 7 }, 'path', 'must be a path pattern'],
    [{ methods: ['GET'] }, 'path', 'must be a path pattern'],
    [{ methods: [], path: '/' }, 'methods', 'at least one'],
    [{ methods: 'GET', path: '/' }, 'methods', 'must be a list'],
    [{ methods: ['get'], path: '/' }, 'methods', 'may list only GET, HEAD, POST'],
    [{ methods: ['TRACE'], path: '/' }, 'methods', 'may list only'],
    [{ methods: ['CONNECT'], path: '/' }, 'methods', 'may list only'],
    [{ methods: ['GET', 'GET'], path: '/' }, 'methods', 'lists GET twice'],
    [{ path: '/' }, 'methods', 'must be a list'],
    [{ methods: ['GET'], path: '/', extra: 1 }, 'extra', 'not a field of a rule'],
  ])('a bad rule (%j) is named by index and field: %s', (rule, field, words) => {
    const check = validatePermissions([{ methods: ['GET'], path: '/ok' }, rule]);
    expect(check.ok).toBe(false);
    if (check.ok) return;
    expect(check.problems).toHaveLength(1);
    const [problem] = check.problems;
    expect(problem?.rule).toBe(1);
    expect(problem?.field).toBe(`permissions[1].${field}`);
    expect(problem?.message).toContain(words);
    expect(problem?.message.startsWith('permissions[1]')).toBe(true);
  });

  test('a rule that is not an object is named, and every bad rule is reported', () => {
    const check = validatePermissions([
      null,
      { methods: ['GET'], path: '/' },
      'x',
      { methods: [], path: 'y' },
    ]);
    expect(check.ok).toBe(false);
    if (check.ok) return;
    expect(check.problems.map((p) => [p.rule, p.field])).toEqual([
      [0, 'permissions[0]'],
      [2, 'permissions[2]'],
      [3, 'permissions[3].methods'],
      [3, 'permissions[3].path'],
    ]);
  });

  test.each([
    '/',
    '/**',
    '/*',
    '/a',
    '/a/*/b',
    '/a/*/**',
    '/*/**',
    "/a-b_c.d~e!$&'()+,=:@",
    '/é/ü',
    '/x..y',
    '/.well-known',
  ])('a valid pattern: %s', (pattern) => {
    expect(patternProblem(pattern)).toBeNull();
  });

  test(`a pattern of exactly 255 bytes is one`, () => {
    expect(patternProblem(`/${'a'.repeat(254)}`)).toBeNull();
  });
});

describe('patternMatches and allows', () => {
  test.each([
    ['/', '/', true],
    ['/', '/a', false],
    ['/**', '/', true],
    ['/**', '/a/b/c/', true],
    ['/*', '/a', true],
    ['/*', '/', false],
    ['/*', '/a/', false],
    ['/*', '/a/b', false],
    ['/a', '/a', true],
    ['/a', '/a/', false],
    ['/a', '/ab', false],
    ['/a', '/A', false],
    ['/a/**', '/a', true],
    ['/a/**', '/a/', true],
    ['/a/**', '/a/b/c', true],
    ['/a/**', '/ab', false],
    ['/a/**', '/ab/c', false],
    ['/a/**', '/b/a', false],
    ['/a/*/c', '/a/b/c', true],
    ['/a/*/c', '/a//c', false],
    ['/a/*/c', '/a/b/c/', false],
    ['/a/*/**', '/a', false],
    ['/a/*/**', '/a/b', true],
    ['/a/*/**', '/a/b/c/d', true],
    ['/é', `/${utf8Bytes('é')}`, true],
    ['/é', '/é', false],
  ])('%s on %s: %s', (pattern, path, expected) => {
    expect(patternMatches(pattern, path)).toBe(expected);
  });

  test('null allows everything; [] nothing; HEAD goes wherever GET does, not the reverse', () => {
    expect(allows(null, 'DELETE', '/anything')).toBe(true);
    expect(allows([], 'GET', '/')).toBe(false);
    const getOnly = [{ methods: ['GET'], path: '/r/**' }];
    expect(allows(getOnly, 'GET', '/r/1')).toBe(true);
    expect(allows(getOnly, 'HEAD', '/r/1')).toBe(true);
    expect(allows(getOnly, 'POST', '/r/1')).toBe(false);
    expect(allows(getOnly, 'GET', '/s')).toBe(false);
    const headOnly = [{ methods: ['HEAD'], path: '/r/**' }];
    expect(allows(headOnly, 'HEAD', '/r')).toBe(true);
    expect(allows(headOnly, 'GET', '/r')).toBe(false);
  });

  test('some rule must hold method and path together', () => {
    const rules = [
      { methods: ['GET'], path: '/read/**' },
      { methods: ['POST'], path: '/write' },
    ];
    expect(allows(rules, 'POST', '/write')).toBe(true);
    expect(allows(rules, 'POST', '/read/x')).toBe(false);
    expect(allows(rules, 'GET', '/write')).toBe(false);
  });
});

describe('decidePath', () => {
  test.each([
    ['/', '/'],
    ['/a/b?x=../..;%2F', '/a/b'],
    ['/a/', '/a/'],
    ['/a%20b/%41', '/a b/A'],
    ['/caf%C3%A9', `/caf${utf8Bytes('é')}`],
    ['/a..b/.x/x.', '/a..b/.x/x.'],
    ['/a%3Fb%23c%3Bd', '/a?b#c;d'],
    ['/a?', '/a'],
  ])('%s is decided as %s', (target, path) => {
    expect(decidePath(target)).toEqual({ ok: true, path });
  });

  test.each([
    ['http://h/a', 'notOriginForm'],
    ['*', 'notOriginForm'],
    ['', 'notOriginForm'],
    ['/a b', 'control'],
    ['/a\tb', 'control'],
    ['/a\u0000b', 'control'],
    ['/a\u007f', 'control'],
    ['/a\\..\\b', 'backslash'],
    ['/a;jsessionid=1', 'semicolon'],
    ['/a/..;/b', 'semicolon'],
    ['/a#/../b', 'fragment'],
    ['/a%2', 'badEscape'],
    ['/a%zz', 'badEscape'],
    ['/a%%32f', 'badEscape'],
    ['/a%2Fb', 'encodedSeparator'],
    ['/a%2fb', 'encodedSeparator'],
    ['/a%5Cb', 'encodedSeparator'],
    ['/a/%2e%2e/b', 'encodedSeparator'],
    ['/a/%2E/b', 'encodedSeparator'],
    ['/a%252Fb', 'encodedSeparator'],
    ['/a%00', 'encodedControl'],
    ['/a%0A', 'encodedControl'],
    ['/a%7F', 'encodedControl'],
    ['/a/../b', 'dotSegment'],
    ['/a/./b', 'dotSegment'],
    ['/..', 'dotSegment'],
    ['/a/..', 'dotSegment'],
    ['//a', 'emptySegment'],
    ['/a//b', 'emptySegment'],
  ])('%j is refused: %s', (target, reason) => {
    expect(decidePath(target)).toEqual({ ok: false, reason });
  });
});

describe('describePermissions', () => {
  test('in plain words, HEAD shown with GET', () => {
    expect(describePermissions(null)).toEqual(['may call every method on every path']);
    expect(describePermissions([])).toEqual(['may call nothing (no rule)']);
    expect(
      describePermissions([
        { methods: ['GET'], path: '/resources/json/service/**' },
        { methods: ['POST', 'DELETE'], path: '/jobs/*' },
      ]),
    ).toEqual([
      'may call GET, HEAD on /resources/json/service/**',
      'may call POST, DELETE on /jobs/*',
    ]);
  });
});

// Properties: the matcher against a reference built from the definition (a regular
// expression: `*` one non-empty segment, a final `/**` nothing or a slash and anything), and
// decidePath against the encoding it undoes.

const SEGMENT_CHARS = "abcAB09-._~!$&'()+,=:@é".split('');
const literal = fc
  .string({ unit: fc.constantFrom(...SEGMENT_CHARS), minLength: 1, maxLength: 4 })
  .filter((s) => s !== '.' && s !== '..');
const patternSegment = fc.oneof(
  { weight: 3, arbitrary: literal },
  { weight: 1, arbitrary: fc.constant('*') },
);
const pattern = fc
  .tuple(fc.array(patternSegment, { maxLength: 4 }), fc.boolean())
  .map(([segments, subtree]) => {
    const all = subtree ? [...segments, '**'] : segments;
    return all.length === 0 ? '/' : `/${all.join('/')}`;
  });
/** Paths as decidePath gives them: segments of pattern characters, a trailing slash sometimes. */
const path = fc
  .tuple(
    fc.array(fc.oneof(literal, fc.constantFrom('a', 'b', '*')), { maxLength: 6 }),
    fc.boolean(),
  )
  .map(([segments, slash]) =>
    utf8Bytes(`/${segments.join('/')}${slash && segments.length > 0 ? '/' : ''}`),
  );

function reference(p: string): RegExp {
  const quote = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  if (p === '/') return /^\/$/;
  const parts = p.slice(1).split('/');
  const subtree = parts.at(-1) === '**';
  if (subtree) parts.pop();
  const body = parts.map((s) => `/${s === '*' ? '[^/]+' : quote(utf8Bytes(s))}`).join('');
  return new RegExp(`^${body}${subtree ? '(?:/.*)?' : ''}$`, 's');
}

/** A path the pattern matches by construction: each `*` filled, `**` given 0-3 segments. */
function instance(p: string, fills: string[], tail: string[]): string {
  if (p === '/') return '/';
  const parts = p.slice(1).split('/');
  const subtree = parts.at(-1) === '**';
  if (subtree) parts.pop();
  let n = 0;
  const filled = parts.map((s) => (s === '*' ? (fills[n++ % fills.length] ?? 'x') : s));
  const all = subtree ? [...filled, ...tail] : filled;
  return utf8Bytes(all.length === 0 ? '/' : `/${all.join('/')}`);
}

describe('properties', () => {
  test('every generated pattern is valid', () => {
    fc.assert(
      fc.property(pattern, (p) => patternProblem(p) === null),
      { numRuns: RUNS },
    );
  });

  test('the matcher agrees with the reference on every pattern and path', () => {
    fc.assert(
      fc.property(pattern, path, (p, q) => patternMatches(p, q) === reference(p).test(q)),
      { numRuns: RUNS * 5 },
    );
  });

  test('a pattern matches every path built from it', () => {
    fc.assert(
      fc.property(
        pattern,
        fc.array(literal, { minLength: 1, maxLength: 4 }),
        fc.array(fc.oneof(literal, fc.constant('')), { maxLength: 3 }),
        (p, fills, tail) => {
          // An empty tail segment is a trailing slash: only at the very end.
          const cleanTail = tail.filter((s, i) => s !== '' || i === tail.length - 1);
          return patternMatches(p, instance(p, fills, cleanTail));
        },
      ),
      { numRuns: RUNS },
    );
  });

  test('a method passes exactly when a matching rule lists it (or GET, for HEAD)', () => {
    const rule = fc.record({
      methods: fc.subarray([...ALLOWED_METHODS], { minLength: 1 }),
      path: pattern,
    });
    fc.assert(
      fc.property(
        fc.array(rule, { maxLength: 5 }),
        fc.constantFrom(...ALLOWED_METHODS),
        path,
        (rules, m, q) => {
          const expected = rules.some(
            (r) =>
              (r.methods.includes(m) || (m === 'HEAD' && r.methods.includes('GET'))) &&
              reference(r.path).test(q),
          );
          return allows(rules, m, q) === expected;
        },
      ),
      { numRuns: RUNS },
    );
  });

  test('decidePath undoes any percent-encoding of safe bytes, whatever the query', () => {
    const encodeSome = (bytes: string, which: boolean[]) =>
      [...bytes]
        .map((ch, i) =>
          ch !== '/' && which[i % which.length]
            ? `%${ch.charCodeAt(0).toString(16).padStart(2, '0').toUpperCase()}`
            : ch,
        )
        .join('');
    fc.assert(
      fc.property(
        path,
        fc.array(fc.boolean(), { minLength: 1 }),
        fc.string(),
        (q, which, query) => {
          if (q.split('/').some((s) => s === '.' || s === '..')) return true;
          const target = `${encodeSome(q, which).replaceAll('%2E', '.')}?${query}`;
          const decided = decidePath(target);
          return decided.ok && decided.path === q;
        },
      ),
      { numRuns: RUNS },
    );
  });

  test('a decided path never holds a dot segment, an inner empty segment, a backslash or a control', () => {
    const byte = fc.oneof(
      fc.constantFrom(
        '/',
        '.',
        '%',
        '2',
        'e',
        'E',
        'f',
        'F',
        '5',
        'c',
        'C',
        '0',
        'a',
        ';',
        '\\',
        '#',
        '?',
      ),
      fc.integer({ min: 0, max: 255 }).map((n) => String.fromCharCode(n)),
    );
    fc.assert(
      fc.property(fc.string({ unit: byte, maxLength: 24 }), (rest) => {
        const decided = decidePath(`/${rest}`);
        if (!decided.ok) return true;
        const segments = decided.path.slice(1).split('/');
        return (
          segments.every(
            (s, i) => s !== '.' && s !== '..' && (s !== '' || i === segments.length - 1),
          ) &&
          ![...decided.path].some(
            (c) => c === '\\' || c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f,
          )
        );
      }),
      { numRuns: RUNS * 5 },
    );
  });
});
