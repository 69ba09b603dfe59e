import { z } from 'zod';
import { MAX_AGE_LIMIT_MS } from '../common/contract.js';
import {
  ABSOLUTE_PATH,
  CIPHER_LIST,
  DNS_NAME,
  HOST_PORT,
  IPV4,
  SCOPE_LIST,
  TOKEN,
  UNIX_SOCKET,
  URL_TEXT,
} from './patterns.js';
import { tracingSchema } from './tracing.js';
import { requestIdSchema } from './trusted-proxies.js';

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

/** nginx size literal for a shared memory zone: kilobytes or megabytes. */
const ZONE_SIZE = /^[1-9][0-9]{0,5}[km]$/;

export const authCacheSchema = z.strictObject({
  /**
   * How long nginx may reuse the sidecar's "yes" for one credential (never past a token's
   * `exp`). Revocation is pushed at once; this is the bound when a push is lost. 0: off.
   */
  max_age_ms: z.number().int().min(0).max(MAX_AGE_LIMIT_MS).default(30_000),
  /** Size of the shared memory that holds decisions; when full, the oldest are evicted. */
  size: allowListed(ZONE_SIZE, 'a size such as 10m or 512k').default('10m'),
  /** The control endpoint (a unix socket) through which the sidecar invalidates decisions. */
  control_socket: allowListed(
    ABSOLUTE_PATH,
    'an absolute path',
    CHARSET('A-Za-z0-9._/@+,=~ -'),
  ).default('/run/gateway-control/nginx.sock'),
});

/**
 * The key table's replica in nginx (docs/decisions/20261127-key-table-replica.md): every API
 * client's key record in shared memory, loaded when the pair starts and kept current by the
 * change feed.
 */
export const keyTableSchema = z.strictObject({
  /** false: no replica; nginx decides from what it learnt, asking the sidecar as before. */
  enabled: z.boolean().default(true),
  /** Its shared memory: about 128 bytes per client (a name up to 19 characters, a 7-digit id), 256 above. */
  size: allowListed(ZONE_SIZE, 'a size such as 64m or 512k').default('64m'),
  /**
   * How long nginx keeps deciding known keys from its replica after its sidecar last said the
   * change feed is live (the database or the sidecar away): past it, it fails closed as
   * without a replica. A 10-minute database restart fits in the default.
   */
  trust_s: z.number().int().min(1).max(86_400).default(900),
});

export const timeoutsSchema = z.strictObject({
  /** How long nginx waits for the sidecar's answer before failing closed (503). */
  auth_ms: z.number().int().min(100).max(60_000).default(3_000),
  /** How long nginx waits between two reads from the application (nginx's proxy_read_timeout). */
  upstream_read_s: z.number().int().min(1).max(86_400).default(60),
});

/**
 * Failed authentications nginx lets through to a verdict per window before it answers 429
 * itself (docs/decisions/20261125-miss-path.md). A caller whose decision is cached is never
 * refused by a budget. 0: that budget is off.
 */
export const failureBudgetSchema = z.strictObject({
  /** Wrong secrets (or an unknown id) per claimed API key id. */
  per_key_id: z.number().int().min(0).max(1_000_000).default(20),
  /**
   * Failed attempts per source address that the sidecar had to decide (refusals nginx decides
   * from memory do not count here). The caller's address: behind a balancer listed in
   * request_id.trusted_proxies, the one its X-Forwarded-For names (keep this on there).
   */
  per_address: z.number().int().min(0).max(1_000_000).default(200),
  /** The window both count in, in seconds. */
  window_s: z.number().int().min(1).max(3_600).default(60),
});

export const consoleSchema = z.strictObject({
  /**
   * The browser console at /console/: while true its static files (no data in them) are served
   * without a credential; false: /console/ reaches the app, authenticated like any path.
   */
  enabled: z.boolean().default(true),
  /** The console's client id at the OpenID Connect provider (a public client); empty: no OIDC sign-in. */
  oidc_client_id: allowListed(TOKEN, 'a client id', TOKEN, { allowEmpty: true }).default(''),
  /** The scopes the console asks the provider for, space-separated. */
  oidc_scope: allowListed(
    SCOPE_LIST,
    'scopes such as "openid profile"',
    CHARSET('A-Za-z0-9._:/ -'),
  ).default('openid'),
});

/** Strict-Transport-Security on every answer: the gateway speaks HTTPS only. 0: not sent. */
const hstsMaxAge = z.number().int().min(0).max(63_072_000).default(31_536_000);

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
  key_table: keyTableSchema.prefault({}),
  timeouts: timeoutsSchema.prefault({}),
  failure_budget: failureBudgetSchema.prefault({}),
  hsts_max_age_s: hstsMaxAge,
  console: consoleSchema.prefault({}),
  request_id: requestIdSchema.prefault({}),
  tracing: tracingSchema.prefault({}),
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
  key_table: Object.keys(keyTableSchema.shape),
  timeouts: Object.keys(timeoutsSchema.shape),
  failure_budget: Object.keys(failureBudgetSchema.shape),
  console: Object.keys(consoleSchema.shape),
  request_id: Object.keys(requestIdSchema.shape),
  tracing: Object.keys(tracingSchema.shape),
};
