/**
 * What an API client may call: its `permissions`, a list of rules or null (everything), defined
 * once for the sidecar's validator, the console's editor and preview, and the tests that hold
 * the Lua code and the nginx module to the same answers (docs/decisions/20261128-permissions.md).
 * Plain TypeScript with no Node API: the console loads the compiled file in the browser.
 *
 * A request passes when some rule lists its method (HEAD wherever GET is) and its pattern
 * matches the request's path. A pattern is an absolute path: `*` is exactly one segment, a
 * final `/**` is zero or more segments below; every other segment is compared byte for byte.
 * The path matched is the one the application receives, percent-decoded once (`decidePath`).
 */
import { ALLOWED_METHODS, PERMISSIONS_TEXT } from './contract.js';

/** One rule: these methods on the paths the pattern matches. */
export interface PermissionRule {
  methods: string[];
  path: string;
}

/** null: the client may call everything (the default); a list: only what a rule allows. */
export type Permissions = PermissionRule[] | null;

/** The most rules a client may have. */
export const MAX_RULES = 100;

/**
 * The longest pattern, in bytes of UTF-8: its length fits the key record's one length byte
 * (KEY_RECORD in contract.ts), and no real path is longer.
 */
export const MAX_PATTERN_BYTES = 255;

/** The methods a rule may list: the gateway's own (any other is refused 405 before a rule). */
export const RULE_METHODS: readonly string[] = ALLOWED_METHODS;

/**
 * A literal segment's characters: RFC 3986's pchar without `%` (patterns hold the decoded
 * path) and `;` (refused in a restricted client's path), and any letter beyond ASCII that is
 * not a control, format or unpaired surrogate code point. `*` is checked apart.
 */
const LITERAL_SEGMENT =
  /^(?:[A-Za-z0-9\-._~!$&'()+,=:@]|[^\p{ASCII}\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}])+$/u;

/** One problem with a permissions value: which rule (null: the whole value), which field, why. */
export interface PermissionProblem {
  /** The rule's index in the list; null when the value itself is wrong. */
  rule: number | null;
  /** `permissions`, or the rule's field: `permissions[3].path`. */
  field: string;
  /** A sentence that names the field. */
  message: string;
}

export type PermissionsCheck =
  | { ok: true; permissions: Permissions }
  | { ok: false; problems: PermissionProblem[] };

const utf8 = new TextEncoder();

/** The UTF-8 bytes of `text` as a string of char codes 0-255: how paths are compared. */
export function utf8Bytes(text: string): string {
  let out = '';
  for (const byte of utf8.encode(text)) out += String.fromCharCode(byte);
  return out;
}

/** Why `pattern` is not one, or null when it is. */
export function patternProblem(pattern: string): string | null {
  if (!pattern.startsWith('/')) return 'must be an absolute path (start with /)';
  if (utf8Bytes(pattern).length > MAX_PATTERN_BYTES)
    return `must be at most ${MAX_PATTERN_BYTES} bytes in UTF-8`;
  if (pattern === '/') return null;
  const segments = pattern.slice(1).split('/');
  for (const [i, segment] of segments.entries()) {
    const last = i === segments.length - 1;
    if (segment === '') return 'must not have an empty segment (// or a trailing /)';
    if (segment === '.' || segment === '..') return 'must not have a . or .. segment';
    if (segment === '*') continue;
    if (segment === '**') {
      if (last) continue;
      return 'may have ** only as its last segment (/**)';
    }
    if (segment.includes('*'))
      return 'may use * only as a whole segment (/*/) or a final /**, never inside a segment';
    if (!LITERAL_SEGMENT.test(segment))
      return "may hold only letters, digits and -._~!$&'()+,=:@ in a segment (no %, ;, ?, #, \\, spaces or controls)";
  }
  return null;
}

function methodsProblems(value: unknown, index: number): PermissionProblem[] {
  const field = `permissions[${index}].methods`;
  const problem = (message: string) => [{ rule: index, field, message: `${field} ${message}` }];
  if (!Array.isArray(value)) return problem('must be a list of methods');
  if (value.length === 0) return problem('must list at least one method');
  const seen = new Set<string>();
  for (const method of value) {
    if (typeof method !== 'string' || !RULE_METHODS.includes(method))
      return problem(`may list only ${RULE_METHODS.join(', ')} (in capitals)`);
    if (seen.has(method)) return problem(`lists ${method} twice`);
    seen.add(method);
  }
  return [];
}

function ruleProblems(value: unknown, index: number): PermissionProblem[] {
  const field = `permissions[${index}]`;
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return [
      {
        rule: index,
        field,
        message: `${field} must be an object {"methods": [...], "path": "..."}`,
      },
    ];
  const problems: PermissionProblem[] = [];
  for (const key of Object.keys(value)) {
    if (key !== 'methods' && key !== 'path')
      problems.push({
        rule: index,
        field: `${field}.${key}`,
        message: `${field}.${key} is not a field of a rule (a rule has only methods and path)`,
      });
  }
  const record = value as Record<string, unknown>;
  problems.push(...methodsProblems(record.methods, index));
  const path = record.path;
  const pathField = `${field}.path`;
  const pathProblem =
    typeof path === 'string' ? patternProblem(path) : 'must be a path pattern (a string)';
  if (pathProblem)
    problems.push({ rule: index, field: pathField, message: `${pathField} ${pathProblem}` });
  return problems;
}

/**
 * Checks a permissions value as it arrives (parsed JSON): null, or a list of at most MAX_RULES
 * rules. On success the rules are returned as stored: each rule's methods in the gateway's
 * order (ALLOWED_METHODS), nothing else changed. Every problem is reported, each naming its rule.
 */
export function validatePermissions(value: unknown): PermissionsCheck {
  if (value === null) return { ok: true, permissions: null };
  if (!Array.isArray(value))
    return {
      ok: false,
      problems: [
        {
          rule: null,
          field: 'permissions',
          message: 'permissions must be a list of rules, or null',
        },
      ],
    };
  if (value.length > MAX_RULES)
    return {
      ok: false,
      problems: [
        {
          rule: null,
          field: 'permissions',
          message: `permissions must have at most ${MAX_RULES} rules (it has ${value.length})`,
        },
      ],
    };
  const problems = value.flatMap((rule, index) => ruleProblems(rule, index));
  if (problems.length > 0) return { ok: false, problems };
  const rules = (value as PermissionRule[]).map((rule) => ({
    methods: RULE_METHODS.filter((m) => rule.methods.includes(m)),
    path: rule.path,
  }));
  return { ok: true, permissions: rules };
}

/** A rule's pattern made ready to match: its literal segments as UTF-8 byte strings. */
interface CompiledPattern {
  /** Segments before a final `**`: a byte string, or null for `*`. */
  segments: (string | null)[];
  /** Whether the pattern ends in `/**`. */
  subtree: boolean;
}

function compilePattern(pattern: string): CompiledPattern {
  if (pattern === '/') return { segments: [''], subtree: false };
  const parts = pattern.slice(1).split('/');
  const subtree = parts[parts.length - 1] === '**';
  if (subtree) parts.pop();
  return { segments: parts.map((p) => (p === '*' ? null : utf8Bytes(p))), subtree };
}

/**
 * Whether a valid pattern matches a decided path (`decidePath`'s path: bytes as char codes
 * 0-255; for an ASCII path, the path itself). `/` matches only `/`; `*` one non-empty segment;
 * a final `/**` the path before it and anything below, a trailing slash included.
 */
export function patternMatches(pattern: string, path: string): boolean {
  const compiled = compilePattern(pattern);
  const segments = path.slice(1).split('/');
  const want = compiled.segments;
  if (compiled.subtree ? segments.length < want.length : segments.length !== want.length)
    return false;
  for (const [i, literal] of want.entries()) {
    const segment = segments[i]!;
    if (literal === null ? segment === '' : segment !== literal) return false;
  }
  return true;
}

/** Whether a rule's methods cover `method`: its own, and HEAD wherever GET is. */
export function ruleCoversMethod(methods: readonly string[], method: string): boolean {
  return methods.includes(method) || (method === 'HEAD' && methods.includes('GET'));
}

/** Whether `permissions` let a request with `method` on the decided `path` through. */
export function allows(permissions: Permissions, method: string, path: string): boolean {
  if (permissions === null) return true;
  return permissions.some(
    (rule) => ruleCoversMethod(rule.methods, method) && patternMatches(rule.path, path),
  );
}

/**
 * Why a request target cannot be decided on for a restricted client (the 400's reason), each
 * a way to make the application see another path than the one matched.
 */
export const AMBIGUOUS_PATH_REASONS = {
  notOriginForm: 'the target is not a path (absolute-form or asterisk-form)',
  control: 'the path holds a space or a control character',
  backslash: 'the path holds a backslash',
  semicolon: 'the path holds a ; parameter',
  fragment: 'the path holds a #',
  badEscape: 'the path holds a % not followed by two hex digits',
  encodedSeparator: 'the path holds an encoded /, \\, . or %',
  encodedControl: 'the path holds an encoded control character (NUL included)',
  dotSegment: 'the path holds a . or .. segment',
  emptySegment: 'the path holds an empty segment (//)',
} as const;

export type AmbiguousPathReason = keyof typeof AMBIGUOUS_PATH_REASONS;

export type DecidedPath = { ok: true; path: string } | { ok: false; reason: AmbiguousPathReason };

const HEX = /^[0-9A-Fa-f]{2}$/;

/**
 * The path a restricted client's request is decided on, from the raw request target (nginx's
 * `$request_uri`: exactly what goes upstream, as bytes in char codes 0-255): the part before
 * `?`, percent-decoded once. A target whose path could reach the application as another
 * path is refused instead: see AMBIGUOUS_PATH_REASONS. A trailing slash is kept (an empty
 * last segment); `//` anywhere else is refused.
 */
export function decidePath(target: string): DecidedPath {
  if (!target.startsWith('/')) return { ok: false, reason: 'notOriginForm' };
  const query = target.indexOf('?');
  const raw = query === -1 ? target : target.slice(0, query);
  let path = '';
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    if (c <= 0x20 || c === 0x7f) return { ok: false, reason: 'control' };
    if (c === 0x5c) return { ok: false, reason: 'backslash' };
    if (c === 0x3b) return { ok: false, reason: 'semicolon' };
    if (c === 0x23) return { ok: false, reason: 'fragment' };
    if (c !== 0x25) {
      path += raw[i];
      continue;
    }
    const hex = raw.slice(i + 1, i + 3);
    if (!HEX.test(hex)) return { ok: false, reason: 'badEscape' };
    const byte = Number.parseInt(hex, 16);
    if (byte === 0x2f || byte === 0x5c || byte === 0x2e || byte === 0x25)
      return { ok: false, reason: 'encodedSeparator' };
    if (byte < 0x20 || byte === 0x7f) return { ok: false, reason: 'encodedControl' };
    path += String.fromCharCode(byte);
    i += 2;
  }
  const segments = path.slice(1).split('/');
  for (const [i, segment] of segments.entries()) {
    if (segment === '.' || segment === '..') return { ok: false, reason: 'dotSegment' };
    if (segment === '' && i < segments.length - 1) return { ok: false, reason: 'emptySegment' };
  }
  return { ok: true, path };
}

/** The methods a rule lets through, HEAD added where GET is, in the gateway's order. */
export function effectiveMethods(methods: readonly string[]): string[] {
  return RULE_METHODS.filter((m) => ruleCoversMethod(methods, m));
}

/** A rule in plain words: `may call GET, HEAD on /resources/json/service/**`. */
export function describeRule(rule: PermissionRule): string {
  return `may call ${effectiveMethods(rule.methods).join(', ')} on ${rule.path}`;
}

/** The effective permissions in plain words, one line per rule. */
export function describePermissions(permissions: Permissions): string[] {
  if (permissions === null) return ['may call every method on every path'];
  if (permissions.length === 0) return ['may call nothing (no rule)'];
  return permissions.map(describeRule);
}

/**
 * Permissions as nginx holds them (PERMISSIONS_TEXT in contract.ts): `<n>`, then per rule a
 * space, two hex digits of method bits (HEAD's set with GET's) and the pattern with every byte
 * beyond ASCII written %XX. Only for validated rules; null has no text (the field is absent).
 */
export function permissionsText(rules: readonly PermissionRule[]): string {
  const bits = PERMISSIONS_TEXT.methodBits;
  const parts = [String(rules.length)];
  for (const rule of rules) {
    let mask = 0;
    for (const method of effectiveMethods(rule.methods)) mask |= bits[method] ?? 0;
    let pattern = '';
    for (const ch of utf8Bytes(rule.path)) {
      const code = ch.charCodeAt(0);
      pattern += code < 0x80 ? ch : `%${code.toString(16).toUpperCase()}`;
    }
    parts.push(`${mask.toString(16).padStart(2, '0')}${pattern}`);
  }
  return parts.join(' ');
}
