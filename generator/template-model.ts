import {
  FORWARDED_TO_SIDECAR,
  IDENTITY_FROM_SIDECAR,
  REFUSAL_FROM_SIDECAR,
  upstreamHeaderVariable,
} from './contract.js';
import { inConfigDir, LAYOUT } from './layout.js';
import { flag, jsonLiteral, quoted, quotedThenVariable } from './nginx-literal.js';
import type { Settings } from './settings-schema.js';

/** One nginx directive argument pair, e.g. `proxy_set_header <name> <value>`. */
export interface NameValue {
  name: string;
  value: string;
}

export interface LocationModel {
  proxyPass: string;
  headers: NameValue[];
}

/** Everything `templates/default.conf.hbs` needs, already rendered to nginx literals. */
export interface DefaultConfModel {
  serverName: string;
  httpsListen: string;
  /** The plain-HTTP listener, which only redirects; null: none. */
  httpRedirect: { listen: string; target: string } | null;
  sslConfInclude: string;
  upstreams: Array<{ name: string; server: string; keepalive: number }>;
  /** `set` lines operators edit to switch methods (spec 5.3). */
  toggles: NameValue[];
  oidcOptions: NameValue[];
  /** `auth_request_set` lines: variable ← sidecar response header. */
  authResults: NameValue[];
  auth: LocationModel;
  /** The auth location for management paths: admin required, never cached. */
  adminAuth: LocationModel;
  /** nginx's reuse of the sidecar's "yes" answers; null: every request asks the sidecar. */
  authCache: AuthCacheModel | null;
  management: LocationModel & { path: string };
  app: LocationModel;
  errors: {
    badRequest: string;
    headersTooLarge: string;
    bodyTooLarge: string;
    uriTooLong: string;
    unauthorizedFallback: string;
    forbiddenFallback: string;
    authUnavailable: string;
    upstreamUnavailable: string;
  };
}

/**
 * The auth answer cache. nginx stores cache lifetimes in whole seconds (a "1s" entry can live
 * almost 2 s), so the bound comes from the key instead: it carries the current time window,
 * derived from `$msec` by a regex map, and an answer is only ever looked up within the window
 * it was made in. A deleted credential is thus refused at most `windowMs` after DELETE answered.
 */
export interface AuthCacheModel {
  windowMs: number;
  path: string;
  /** `map $msec $auth_cache_window` entries: regex → window label. */
  windows: NameValue[];
  key: string;
}

/** Everything `templates/ssl.conf.hbs` needs. */
export interface SslConfModel {
  certificate: string;
  key: string;
  protocols: string;
  ciphers: string;
}

const APP_UPSTREAM = 'gateway_app';
const SIDECAR_UPSTREAM = 'gateway_sidecar';

/** The sidecar's single error shape (`{"errors":[{code,message}]}`), for nginx's own answers. */
function errorBody(code: string, message: string): string {
  return jsonLiteral({ errors: [{ code, message }] });
}

// Keep-alive to the upstream pools: HTTP/1.1 without the client's Connection header.
const KEEPALIVE_HEADERS: NameValue[] = [{ name: 'Connection', value: '""' }];

// The gateway terminates TLS and is the edge: the caller's own X-Forwarded-For is not trusted.
const FORWARDED_HEADERS: NameValue[] = [
  { name: 'Host', value: '$host' },
  { name: 'X-Forwarded-Proto', value: 'https' },
  { name: 'X-Forwarded-For', value: '$remote_addr' },
];

const IDENTITY_HEADERS: NameValue[] = IDENTITY_FROM_SIDECAR.map(({ header, variable }) => ({
  name: header,
  value: variable,
}));

const SIDECAR_HEADERS: NameValue[] = FORWARDED_TO_SIDECAR.map(({ header, variable }) => ({
  name: header,
  value: variable,
}));

// What an auth answer depends on besides the credential: the methods and OIDC options in force.
const DECISION_VARIABLES = FORWARDED_TO_SIDECAR.map((row) => row.variable).filter(
  (v) => v !== '$request_method' && v !== '$request_uri' && v !== '$oidc_redirect_uri',
);

function authCacheModel(windowMs: number, path: string): AuthCacheModel | null {
  if (windowMs === 0) return null;
  const tenths = windowMs / 100;
  const windows: NameValue[] = [];
  for (let first = 0; first < 10; first += tenths) {
    const last = first + tenths - 1;
    const digit = first === last ? String(first) : `[${first}-${last}]`;
    // Constant nginx text (a regex and a variable), so not through quoted(), which refuses both.
    windows.push({
      name: `"~^(?<auth_second>\\d+)\\.${digit}"`,
      value: `"\${auth_second}${String.fromCharCode(97 + first / tenths)}"`,
    });
  }
  return {
    windowMs,
    path: quoted(path),
    windows,
    key: `"${['$auth_cache_window', ...DECISION_VARIABLES, '$http_authorization'].join('|')}"`,
  };
}

/** Builds the default.conf model: every decision about what nginx does is made here. */
export function defaultConfModel(settings: Settings): DefaultConfModel {
  const oidc = settings.open_id_connect;
  const portSuffix = settings.https_port === 443 ? '' : `:${settings.https_port}`;
  return {
    serverName: settings.fqdn,
    httpsListen: `${settings.https_port} ssl http2`,
    httpRedirect:
      settings.http_redirect_port === undefined
        ? null
        : {
            listen: String(settings.http_redirect_port),
            target: quotedThenVariable(`https://${settings.fqdn}${portSuffix}`, '$request_uri'),
          },
    sslConfInclude: quoted(inConfigDir(settings.config_dir, LAYOUT.sslConf)),
    upstreams: [
      {
        name: APP_UPSTREAM,
        server: settings.upstreams.app,
        keepalive: settings.upstreams.keepalive,
      },
      {
        name: SIDECAR_UPSTREAM,
        server: settings.upstreams.sidecar,
        keepalive: settings.upstreams.keepalive,
      },
    ],
    toggles: [
      { name: '$api_keys_enabled', value: flag(settings.api_keys_enabled) },
      { name: '$open_id_connect_enabled', value: flag(settings.open_id_connect_enabled) },
    ],
    oidcOptions: [
      { name: '$oidc_discovery', value: quoted(oidc.discovery) },
      { name: '$oidc_ssl_verify', value: quoted(oidc.ssl_verify) },
      { name: '$oidc_accept_unsupported_alg', value: flag(oidc.accept_unsupported_alg) },
      { name: '$oidc_accept_none_alg', value: flag(oidc.accept_none_alg) },
      { name: '$oidc_redirect_uri', value: quoted(oidc.redirect_uri) },
      { name: '$oidc_client_id_claim', value: quoted(oidc.client_id_claim) },
      { name: '$oidc_client_name_claim', value: quoted(oidc.client_name_claim) },
      { name: '$oidc_audience', value: quoted(oidc.audience) },
    ],
    authResults: [...IDENTITY_FROM_SIDECAR, ...REFUSAL_FROM_SIDECAR].map(
      ({ header, variable }) => ({ name: variable, value: upstreamHeaderVariable(header) }),
    ),
    auth: {
      proxyPass: `http://${SIDECAR_UPSTREAM}/auth`,
      // No request body goes to the sidecar, so no length either.
      headers: [...KEEPALIVE_HEADERS, { name: 'Content-Length', value: '""' }, ...SIDECAR_HEADERS],
    },
    adminAuth: {
      proxyPass: `http://${SIDECAR_UPSTREAM}/auth`,
      headers: [
        ...KEEPALIVE_HEADERS,
        { name: 'Content-Length', value: '""' },
        ...SIDECAR_HEADERS,
        { name: 'X-Gateway-Require-Admin', value: 'true' },
      ],
    },
    authCache: authCacheModel(settings.auth_cache.window_ms, settings.auth_cache.path),
    management: {
      path: '/v1/management/',
      proxyPass: `http://${SIDECAR_UPSTREAM}`,
      headers: [
        ...KEEPALIVE_HEADERS,
        ...FORWARDED_HEADERS,
        ...IDENTITY_HEADERS,
        ...SIDECAR_HEADERS,
      ],
    },
    app: {
      proxyPass: `http://${APP_UPSTREAM}`,
      // The credential was for the gateway; the app gets the identity instead, never the key
      // or token itself (nothing to leak from the app's logs). An empty value sends no header.
      headers: [
        ...KEEPALIVE_HEADERS,
        ...FORWARDED_HEADERS,
        ...IDENTITY_HEADERS,
        { name: 'Authorization', value: '""' },
      ],
    },
    errors: {
      badRequest: errorBody(
        'BAD_REQUEST',
        'The request is malformed (for example a repeated Authorization header).',
      ),
      headersTooLarge: errorBody('HEADERS_TOO_LARGE', 'The request headers are too large.'),
      bodyTooLarge: errorBody('PAYLOAD_TOO_LARGE', 'The request body is too large.'),
      uriTooLong: errorBody('URI_TOO_LONG', 'The request URI is too long.'),
      unauthorizedFallback: errorBody('UNAUTHORIZED', 'Authentication is required.'),
      forbiddenFallback: errorBody('FORBIDDEN', 'The credential does not allow this request.'),
      authUnavailable: errorBody(
        'AUTH_UNAVAILABLE',
        'The authentication service is unavailable; try again later.',
      ),
      upstreamUnavailable: errorBody(
        'UPSTREAM_UNAVAILABLE',
        'The service behind the gateway is unavailable; try again later.',
      ),
    },
  };
}

/** Builds the ssl.conf model. */
export function sslConfModel(settings: Settings): SslConfModel {
  return {
    certificate: quoted(inConfigDir(settings.config_dir, LAYOUT.certificate)),
    key: quoted(inConfigDir(settings.config_dir, LAYOUT.key)),
    protocols: settings.tls.protocols.join(' '),
    ciphers: quoted(settings.tls.ciphers),
  };
}
