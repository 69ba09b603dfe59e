import { z } from 'zod';
import {
  ABSOLUTE_PATH,
  CIPHER_LIST,
  DNS_NAME,
  HOST_PORT,
  IPV4,
  TOKEN,
  UNIX_SOCKET,
  URL_TEXT,
} from './patterns.js';

/** TLS versions nginx 1.22 with OpenSSL 3 can offer; SSLv2/SSLv3 are deliberately not accepted. */
export const TLS_PROTOCOLS = ['TLSv1', 'TLSv1.1', 'TLSv1.2', 'TLSv1.3'] as const;

/** Mozilla "intermediate" TLS 1.2 suites (forward secret AEAD only); TLS 1.3 suites are OpenSSL's. */
export const DEFAULT_CIPHERS = [
  'ECDHE-ECDSA-AES128-GCM-SHA256',
  'ECDHE-RSA-AES128-GCM-SHA256',
  'ECDHE-ECDSA-AES256-GCM-SHA384',
  'ECDHE-RSA-AES256-GCM-SHA384',
  'ECDHE-ECDSA-CHACHA20-POLY1305',
  'ECDHE-RSA-CHACHA20-POLY1305',
].join(':');

const NAMED_CHARACTERS: Record<string, string> = {
  ';': 'a semicolon',
  '{': 'a brace',
  '}': 'a brace',
  '"': 'a double quote',
  "'": 'a single quote',
  $: 'a dollar sign',
  '\\': 'a backslash',
  '\n': 'a line break',
  '\r': 'a line break',
  '\t': 'a tab',
  ' ': 'a space',
  '#': 'a hash sign',
};

/** Says why a value failed its allow-list, naming the first character that is never allowed. */
function rejection(value: string, expected: string, allowed: RegExp): string {
  const shown = JSON.stringify(value.length > 80 ? `${value.slice(0, 77)}...` : value);
  const bad = [...value].find((ch) => ch in NAMED_CHARACTERS && !allowed.test(`a${ch}a`));
  if (value === '') return `must not be empty (expected ${expected})`;
  if (bad !== undefined) return `must not contain ${NAMED_CHARACTERS[bad]} (got ${shown})`;
  return `expected ${expected}, got ${shown}`;
}

/** A string that must match `pattern` entirely; the message names the offending character. */
function allowListed(
  pattern: RegExp,
  expected: string,
  charset: RegExp = pattern,
  { allowEmpty = false } = {},
) {
  return z.string().check((ctx) => {
    if (!(allowEmpty && ctx.value === '') && !pattern.test(ctx.value)) {
      ctx.issues.push({
        code: 'custom',
        input: ctx.value,
        message: rejection(ctx.value, expected, charset),
      });
    }
  });
}

// Probes a single character against a pattern's character class for `rejection`.
const CHARSET = (cls: string) => new RegExp(`^[${cls}]+$`);

const port = z.unknown().transform((value, ctx) => {
  if (typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= 65535) {
    return value;
  }
  ctx.issues.push({
    code: 'custom',
    input: value,
    message: `must be a port number from 1 to 65535 (got ${JSON.stringify(value)})`,
  });
  return z.NEVER;
});

const dnsName = allowListed(
  DNS_NAME,
  'a DNS name such as gateway.example.com',
  CHARSET('A-Za-z0-9.-'),
)
  .refine((v) => !IPV4.test(v), { message: 'must be a DNS name, not an IP address' })
  .transform((v) => v.toLowerCase());

const upstreamAddress = allowListed(
  new RegExp(`${HOST_PORT.source}|${UNIX_SOCKET.source}`),
  'host:port, [ipv6]:port or unix:/path',
  CHARSET('A-Za-z0-9._/@+,=~:\\[\\]-'),
).refine(
  (v) => {
    const match = HOST_PORT.exec(v);
    return match === null || (Number(match[1]) >= 1 && Number(match[1]) <= 65535);
  },
  { message: 'port must be between 1 and 65535' },
);

function isHttpUrl(value: string): boolean {
  if (!URL_TEXT.test(value)) return false;
  try {
    const url = new URL(value);
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.hostname !== '';
  } catch {
    return false;
  }
}

const httpUrl = z.string().check((ctx) => {
  if (ctx.value !== '' && !isHttpUrl(ctx.value)) {
    ctx.issues.push({
      code: 'custom',
      input: ctx.value,
      message: rejection(ctx.value, 'an http(s) URL', URL_TEXT),
    });
  }
});

const token = allowListed(TOKEN, 'a claim or audience name');

const protocol = z.enum(TLS_PROTOCOLS, {
  error: (issue) =>
    `unknown TLS protocol ${JSON.stringify(issue.input)} (known: ${TLS_PROTOCOLS.join(', ')})`,
});

export const upstreamsSchema = z.strictObject({
  /** The application behind the gateway. */
  app: upstreamAddress.default('127.0.0.1:8080'),
  /** The TypeScript sidecar answering `/auth` and `/v1/management/`. */
  sidecar: upstreamAddress.default('127.0.0.1:8081'),
  /** Idle keep-alive connections each nginx worker keeps per upstream pool. */
  keepalive: z.number().int().min(1).max(1024).default(32),
});

export const openIdConnectSchema = z.strictObject({
  discovery: httpUrl.default(''),
  ssl_verify: z.enum(['yes', 'no']).default('yes'),
  accept_unsupported_alg: z.boolean().default(false),
  accept_none_alg: z.boolean().default(false),
  redirect_uri: httpUrl.default(''),
  client_id_claim: token.default('sub'),
  client_name_claim: token.default('sub'),
  /** Empty: the sidecar does not check the token's `aud`. */
  audience: allowListed(TOKEN, 'an audience', TOKEN, { allowEmpty: true }).default(''),
});

export const tlsSchema = z.strictObject({
  protocols: z
    .array(protocol)
    .min(1, { message: 'at least one TLS protocol is needed' })
    .refine((list) => new Set(list).size === list.length, { message: 'lists a protocol twice' })
    .default(['TLSv1.2', 'TLSv1.3']),
  ciphers: allowListed(CIPHER_LIST, 'an OpenSSL cipher list such as HIGH:!aNULL').default(
    DEFAULT_CIPHERS,
  ),
});

/** Revocation bounds nginx can hold exactly: the window must divide a second into tenths. */
export const AUTH_CACHE_WINDOWS_MS = [0, 100, 200, 500, 1000] as const;

export const authCacheSchema = z.strictObject({
  /**
   * How long nginx may reuse the sidecar's "yes" for one credential: the revocation bound
   * through nginx. 0 turns the cache off (every request asks the sidecar).
   */
  window_ms: z
    .union(
      AUTH_CACHE_WINDOWS_MS.map((n) => z.literal(n)) as [
        z.ZodLiteral<0>,
        ...z.ZodLiteral<number>[],
      ],
      {
        error: `must be one of ${AUTH_CACHE_WINDOWS_MS.join(', ')}`,
      },
    )
    .default(500),
  /** Where nginx keeps cached answers; their keys hold credentials, so use a tmpfs. */
  path: allowListed(ABSOLUTE_PATH, 'an absolute path', CHARSET('A-Za-z0-9._/@+,=~ -')).default(
    '/var/cache/gateway-auth',
  ),
});

export const settingsObjectSchema = z.strictObject({
  /** The host's fully qualified domain name: server_name, certificate CN and SAN. */
  fqdn: dnsName.default('localhost'),
  https_port: port.default(443),
  /** A plain-HTTP listener that only redirects to HTTPS; absent: no plain-HTTP listener. */
  http_redirect_port: port.optional(),
  /** Where nginx sees the configuration directory; rendered into `include` and certificate paths. */
  config_dir: allowListed(ABSOLUTE_PATH, 'an absolute path', CHARSET('A-Za-z0-9._/@+,=~ -'))
    .refine((p) => p === '/' || (!p.endsWith('/') && !/\/\.{0,2}(?:\/|$)/.test(p)), {
      message: 'must be a normalised path (no //, /./, /../ or trailing slash)',
    })
    .default('/etc/config'),
  upstreams: upstreamsSchema.prefault({}),
  api_keys_enabled: z.boolean().default(true),
  open_id_connect_enabled: z.boolean().default(false),
  open_id_connect: openIdConnectSchema.prefault({}),
  tls: tlsSchema.prefault({}),
  auth_cache: authCacheSchema.prefault({}),
});

/** The complete settings schema: per-field rules plus the rules that span fields. */
export const settingsSchema = settingsObjectSchema.superRefine((s, ctx) => {
  if (s.open_id_connect_enabled === true && s.open_id_connect?.discovery === '') {
    ctx.addIssue({
      code: 'custom',
      path: ['open_id_connect', 'discovery'],
      message: 'is required when open_id_connect_enabled is true',
    });
  }
  if (s.api_keys_enabled === false && s.open_id_connect_enabled === false) {
    ctx.addIssue({
      code: 'custom',
      path: ['api_keys_enabled'],
      message:
        'api_keys_enabled and open_id_connect_enabled are both false: every request would be refused',
    });
  }
  if (s.http_redirect_port !== undefined && s.http_redirect_port === s.https_port) {
    ctx.addIssue({
      code: 'custom',
      path: ['http_redirect_port'],
      message: 'must differ from https_port',
    });
  }
});

/** Validated settings, with every default filled in. */
export type Settings = z.output<typeof settingsSchema>;

/** The keys each object of the settings accepts, by dotted path, for "did you mean" hints. */
export const ALLOWED_KEYS: Record<string, string[]> = {
  '': Object.keys(settingsObjectSchema.shape),
  upstreams: Object.keys(upstreamsSchema.shape),
  open_id_connect: Object.keys(openIdConnectSchema.shape),
  tls: Object.keys(tlsSchema.shape),
  auth_cache: Object.keys(authCacheSchema.shape),
};
