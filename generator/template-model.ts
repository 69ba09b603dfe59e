import {
  CONSOLE_NGINX,
  CONTROL,
  DECISION_VARIABLES,
  FORWARDED_TO_SIDECAR,
  IDENTITY_FROM_SIDECAR,
  KEY_TABLE,
  NGINX_MODULE,
  NGINX_NAMES,
  NGINX_SPAN_RECORD,
  REQUEST_ID,
  REQUEST_ID_CHARACTERS,
  SIDECAR_PROBE,
  SIDECAR_PROOF,
  TOGGLE_VARIABLES,
} from '../common/contract.js';
import { answerBody, NGINX_ERROR_PAGES } from '../common/gateway-errors.js';
import { inConfigDir, LAYOUT } from './layout.js';
import { flag, jsonLiteral, quoted, quotedThenVariable } from './nginx-literal.js';
import { DNS_NAME, IPV4, UNIX_SOCKET } from './patterns.js';
import type { Settings } from './settings-schema.js';
import { samplePercent, TRACE_VARIABLES } from './tracing.js';

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
  requestId: RequestIdModel;
  /** W3C trace context's maps (settings: tracing); null: tracing off, nothing rendered. */
  tracing: TracingModel | null;
  /** Where $remote_addr comes from behind a trusted proxy; null: always the connection's peer. */
  callerAddress: CallerAddressModel | null;
  /** The plain-HTTP listener, which only redirects; null: none. */
  httpRedirect: { listen: string; target: string; requestId: NameValue } | null;
  /** On the control socket: the Lua side's counters, read by the sidecar's /metrics. */
  metricsPath: string;
  sslConfInclude: string;
  upstreams: Array<{ name: string; server: string; keepalive: number }>;
  /** `set` lines operators edit to switch methods (spec 5.3). */
  toggles: NameValue[];
  oidcOptions: NameValue[];
  decisionCache: DecisionCacheModel;
  /** null: key_table.enabled is false. */
  keyTable: KeyTableModel | null;
  /** `set <variable> ""`: identity variables, filled by the Lua access code on a "yes". */
  identityVariables: string[];
  /** `add_header ... always` on every answer of the HTTPS server (HSTS, the request id). */
  serverHeaders: NameValue[];
  /** The upstream's own header of that name is dropped: the caller gets nginx's request id. */
  hiddenUpstreamHeaders: string[];
  /** The same as serverHeaders plus what nginx's own JSON answers carry (nosniff, no-store). */
  answerHeaders: NameValue[];
  /** `error_page <nginxStatus> <path>` and the internal location answering it. */
  errorPages: Array<{ nginxStatus: number; status: number; path: string; body: string }>;
  notFoundBody: string;
  /** The gateway's nginx module's directive, `on` in `location /` (nginx-module/). */
  moduleDirective: string;
  /** Paths of the public server that never reach the app: authenticated, then the JSON 404. */
  reservedPaths: string[];
  /** The control socket's location where the sidecar collects nginx's own refusal counts. */
  failuresPath: string;
  /** The control socket's location where the sidecar announces new clients' row ids. */
  createdPath: string;
  /** The control socket's location where the sidecar collects nginx's per-client request counts. */
  usagePath: string;
  /** The control location where the sidecar exchanges rate limit counts with the fleet's. */
  limitsPath: string;
  /** Where an error location asked from outside is sent: the reserved prefix it lives under. */
  errorPageFromOutside: string;
  /** On the control socket: nginx proxies the Lua code's questions to the sidecar. */
  auth: LocationModel & { path: string; readTimeout: string };
  /** On the control socket: the sidecar's readiness asks whether nginx reaches it. */
  sidecarProbe: LocationModel & { path: string };
  /** `bare`: the prefix without its slash, where nothing lives (admin, then the JSON 404). */
  /** `proof`: the variable Lua sets to nginx's proof for the sidecar (SIDECAR_PROOF). */
  management: LocationModel & {
    path: string;
    bare: string;
    proof: string;
    /** The server's error pages again (a location's error_page replaces them all), with the sidecar's own failures (502, 504) answered 503. */
    errorPages: DefaultConfModel['errorPages'];
  };
  app: LocationModel & { readTimeout: string };
  console: ConsoleModel;
}

/** The browser console's location (docs/decisions/20261123-console.md). */
export interface ConsoleModel {
  path: string;
  /** `set` lines operators edit: the switch and the console's OIDC client. */
  settings: NameValue[];
  /** The named location that takes /console/ to the app while the console is off. */
  offLocation: string;
  /** nginx.conf's variable holding the folder that contains `console/`. */
  staticRoot: string;
  /** The console's settings as JSON, answered by Lua from the `set` lines. */
  configPath: string;
  /** Headers of every console answer: the security headers again (add_header in a location drops the server's) and the CSP. */
  headers: NameValue[];
}

/**
 * How `$gateway_request_id` is chosen (docs/decisions/20261125-trusted-request-id.md): nginx's
 * own id, or the caller's well-formed `X-Request-Id` when the connection comes from a trusted
 * proxy. nginx evaluates `geo` and `map` only when the variable is first used in a request.
 */
/** default.conf's trace-context maps (generator/tracing.ts). */
export interface TracingModel {
  /** The map's source: the trusted-peer flag (or "0": no proxy trusted) and the caller's header. */
  source: string;
  /** The regex (quoted) that keeps a trusted peer's well-formed `traceparent`, as `capture`. */
  keep: string;
  capture: string;
  /** nginx's random 32 hex digits: a new trace's id, and its last 16 the gateway's span id. */
  generated: string;
  /** null: no new trace is sampled. */
  samplePercent: string | null;
  variables: typeof TRACE_VARIABLES;
  /**
   * nginx's span records to the sidecar, batched by the module's `directive`; null: no
   * otlp_endpoint, nothing sent.
   */
  spans: { directive: string; target: string; record: string } | null;
}

export interface RequestIdModel {
  variable: string;
  /** nginx's own id, the map's default. */
  generated: string;
  /** null: no proxy is trusted, the variable is always nginx's own id. */
  trusted: {
    /**
     * `geo <peerAddress> <peerVariable>`: 1 for the listed addresses. The connection's peer
     * (`$realip_remote_addr`), never the caller's address that realip puts in `$remote_addr`.
     */
    peerAddress: string;
    peerVariable: string;
    proxies: string[];
    /** The map's source: the peer's flag and the caller's header, joined. */
    source: string;
    /** The regex (quoted) that keeps a trusted peer's well-formed id, as `callerVariable`. */
    keep: string;
    callerVariable: string;
  } | null;
}

/**
 * The caller's own address behind a trusted proxy (docs/decisions/20261127-caller-address-behind-a-balancer.md):
 * nginx's realip module takes it from `header` when the connection's peer is one of `from`
 * (request_id.trusted_proxies), so `$remote_addr` and `$binary_remote_addr` (the per-address
 * failure budget, the access log, the X-Forwarded-For sent on) are the caller's. `recursive`:
 * the rightmost address that is not itself a listed proxy.
 */
export interface CallerAddressModel {
  from: string[];
  header: string;
  recursive: 'on' | 'off';
}

/** The key table's replica: its dict and the control location that loads it. */
export interface KeyTableModel {
  dict: string;
  size: string;
  controlPath: string;
  /** `set $key_table_trust_s <n>` in the control location. */
  trust: NameValue;
}

/** The decision cache in shared memory and the control endpoint that invalidates it. */
export interface DecisionCacheModel {
  decisionsDict: string;
  revocationsDict: string;
  metricsDict: string;
  size: string;
  /** `set $auth_cache_max_age_ms <n>`: read by Lua on every miss. */
  maxAge: NameValue;
  controlListen: string;
  /** `set $gateway_control_socket "unix:..."`: where the Lua code asks on a miss. */
  controlSocket: NameValue;
  /** `set $gateway_decision_inputs "..."`: every setting a decision depends on, joined. */
  decisionInputs: NameValue;
  keysDict: string;
  budgetsDict: string;
  /** Rate-limit windows and per-client request counts. */
  limitsDict: string;
  /**
   * `set $gateway_sidecar "..."`: the sidecar for one-hop asks (a unix socket, an IPv4 literal,
   * or a DNS name resolved in the master); empty: via the control socket.
   */
  sidecar: NameValue;
  /**
   * What `init_by_lua` passes to `gateway.init.master`, as Lua string literals: the proof
   * secret's file (read by the master), then the sidecar's address when it is a DNS name (for
   * the master to resolve).
   */
  masterArgument: string;
  /** `set $gateway_auth_timeout_ms <n>`: the one-hop ask's timeouts. */
  authTimeout: NameValue;
  /** `set $gateway_failure_budget "<per key id> <per address> <window s>"`. */
  failureBudget: NameValue;
}

/** Everything `templates/ssl.conf.hbs` needs. */
export interface SslConfModel {
  certificate: string;
  key: string;
  protocols: string;
  ciphers: string;
}

const APP_UPSTREAM = 'gateway_app';
const CONSOLE_PATH = '/console/';
const MANAGEMENT_PATH = '/v1/management/';
const SIDECAR_UPSTREAM = 'gateway_sidecar';

// Keep-alive to the upstream pools: HTTP/1.1 without the client's Connection header.
const KEEPALIVE_HEADERS: NameValue[] = [{ name: 'Connection', value: '""' }];

// The gateway terminates TLS: the app and the sidecar get one address, $remote_addr, the caller's
// (the peer, or what a trusted proxy's X-Forwarded-For names: callerAddressModel), never the
// X-Forwarded-For a caller wrote.
const FORWARDED_HEADERS: NameValue[] = [
  { name: 'Host', value: '$host' },
  { name: 'X-Forwarded-Proto', value: 'https' },
  { name: 'X-Forwarded-For', value: '$remote_addr' },
];

// Headers with which frameworks (Rails, Laravel, express method-override, IIS) change the
// method or path after the gateway judged the request line, or rebuild the URL from the caller's
// host/prefix: never sent to the app (empty: nginx sends no header). Host and X-Forwarded-Proto
// above are the gateway's own. docs/decisions/20261201-override-headers-and-dot-segments.md
const OVERRIDE_HEADERS: NameValue[] = [
  'X-HTTP-Method-Override',
  'X-HTTP-Method',
  'X-Method-Override',
  'X-Original-URL',
  'X-Rewrite-URL',
  'X-Forwarded-Host',
  'X-Forwarded-Prefix',
  'Forwarded',
].map((name) => ({ name, value: '""' }));

// On the app's request and on every answer: one id to find a request in every log.
const REQUEST_ID_HEADER: NameValue = { name: REQUEST_ID.header, value: REQUEST_ID.variable };

const TRUSTED_PEER_VARIABLE = '$gateway_request_id_trusted_peer';
// realip's variable for the connection's own peer, whatever $remote_addr became.
const PEER_ADDRESS_VARIABLE = '$realip_remote_addr';
const CALLER_ID_VARIABLE = '$gateway_caller_request_id';

function requestIdModel(settings: Settings): RequestIdModel {
  const proxies = settings.request_id.trusted_proxies;
  return {
    variable: REQUEST_ID.variable,
    generated: REQUEST_ID.generated,
    trusted:
      proxies.length === 0
        ? null
        : {
            peerAddress: PEER_ADDRESS_VARIABLE,
            peerVariable: TRUSTED_PEER_VARIABLE,
            proxies,
            source: `"${TRUSTED_PEER_VARIABLE}:$http_${REQUEST_ID.header.toLowerCase().replaceAll('-', '_')}"`,
            // Only "1:" (a trusted peer) followed by an id of the shape the sidecar and app log.
            keep: `"~^1:(?<${CALLER_ID_VARIABLE.slice(1)}>${REQUEST_ID_CHARACTERS})$"`,
            callerVariable: CALLER_ID_VARIABLE,
          },
  };
}

// version 00, a trace id and a parent id that are not all zeros, any flags (lowercase hex only).
const TRACEPARENT = '00-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}';
const TRACE_CAPTURE = '$gateway_traceparent_in';

function tracingModel(settings: Settings): TracingModel | null {
  if (!settings.tracing.enabled) return null;
  const trusted = settings.request_id.trusted_proxies.length > 0;
  return {
    source: `"${trusted ? TRUSTED_PEER_VARIABLE : '0'}:$http_traceparent"`,
    keep: `"~^1:(?<${TRACE_CAPTURE.slice(1)}>${TRACEPARENT})$"`,
    capture: TRACE_CAPTURE,
    generated: REQUEST_ID.generated,
    samplePercent: samplePercent(settings.tracing.sample_ratio),
    variables: TRACE_VARIABLES,
    spans:
      settings.tracing.otlp_endpoint === ''
        ? null
        : {
            directive: NGINX_SPAN_RECORD.directive,
            target: settings.tracing.nginx_spans_to,
            record: spanRecord(),
          },
  };
}

const SPAN_RECORD_VARIABLES: Record<(typeof NGINX_SPAN_RECORD.fields)[number], string> = {
  traceId: TRACE_VARIABLES.traceId,
  spanId: TRACE_VARIABLES.spanId,
  parentId: TRACE_VARIABLES.parentIn,
  end: '$msec',
  duration: '$request_time',
  method: '$request_method',
  status: '$status',
  authMethod: clientVariable('method'),
  clientId: clientVariable('client_id'),
  // $uri: the normalised path, never the query (where a caller might put anything). Last, as
  // the one value that may hold a space.
  path: '$uri',
};

/** nginx's span record (NGINX_SPAN_RECORD): its variables in the contract's order, quoted. */
function spanRecord(): string {
  return `"${NGINX_SPAN_RECORD.fields.map((field) => SPAN_RECORD_VARIABLES[field]).join(' ')}"`;
}

function clientVariable(role: 'client_id' | 'method'): string {
  return IDENTITY_FROM_SIDECAR.find((row) => row.role === role)!.variable;
}

/** traceparent and tracestate toward an upstream: the gateway's span, the trusted state. */
function traceHeaders(settings: Settings): NameValue[] {
  if (!settings.tracing.enabled) return [];
  return [
    { name: 'traceparent', value: TRACE_VARIABLES.traceparent },
    { name: 'tracestate', value: TRACE_VARIABLES.tracestate },
  ];
}

/** The same trusted proxies name the caller's address: realip, only when any is listed. */
function callerAddressModel(settings: Settings): CallerAddressModel | null {
  const proxies = settings.request_id.trusted_proxies;
  if (proxies.length === 0) return null;
  return { from: proxies, header: 'X-Forwarded-For', recursive: 'on' };
}

const IDENTITY_HEADERS: NameValue[] = IDENTITY_FROM_SIDECAR.map(({ header, variable }) => ({
  name: header,
  value: variable,
}));

const SIDECAR_HEADERS: NameValue[] = FORWARDED_TO_SIDECAR.map(({ header, variable }) => ({
  name: header,
  value: variable,
}));

/** nginx's own answers as JSON: `error_page <nginxStatus> =<status> <path>`. */
const errorPages: DefaultConfModel['errorPages'] = NGINX_ERROR_PAGES.map((page) => ({
  nginxStatus: page.nginxStatus,
  status: page.status,
  path: `${NGINX_NAMES.errorLocationPrefix}${page.nginxStatus}`,
  body: jsonLiteral(JSON.parse(answerBody(page))),
}));

/**
 * Management's: the sidecar serves it, so the sidecar gone or silent mid-request (nginx's 502,
 * 504) is the 503 the access phase answers when it cannot ask (AUTH_UNAVAILABLE), not the
 * application's UPSTREAM_* answers.
 */
const managementErrorPages: DefaultConfModel['errorPages'] = errorPages.map((page) => {
  if (page.nginxStatus !== 502 && page.nginxStatus !== 504) return page;
  const unavailable = errorPages.find((p) => p.nginxStatus === 503)!;
  return { ...page, status: unavailable.status, path: unavailable.path };
});

/** Builds the default.conf model: every decision about what nginx does is made here. */
export function defaultConfModel(settings: Settings): DefaultConfModel {
  const serverHeaders = serverHeadersOf(settings);
  return {
    ...listenersModel(settings),
    metricsPath: CONTROL.metrics,
    sslConfInclude: quoted(inConfigDir(settings.config_dir, LAYOUT.sslConf)),
    upstreams: upstreamsModel(settings),
    ...switchesModel(settings),
    decisionCache: decisionCacheModel(settings),
    keyTable: keyTableModel(settings),
    identityVariables: IDENTITY_FROM_SIDECAR.map(({ variable }) => variable),
    ...answersModel(serverHeaders),
    console: consoleModel(settings, serverHeaders),
    ...locationsModel(settings),
  };
}

/** HSTS (when on) and the request id: `add_header ... always` on every answer. */
function serverHeadersOf(settings: Settings): NameValue[] {
  const securityHeaders: NameValue[] =
    settings.hsts_max_age_s > 0
      ? [{ name: 'Strict-Transport-Security', value: quoted(`max-age=${settings.hsts_max_age_s}`) }]
      : [];
  return [...securityHeaders, REQUEST_ID_HEADER];
}

/** The HTTPS server's name and listener, who the caller is, and the plain-HTTP redirect. */
function listenersModel(
  settings: Settings,
): Pick<
  DefaultConfModel,
  'serverName' | 'requestId' | 'tracing' | 'callerAddress' | 'httpsListen' | 'httpRedirect'
> {
  const portSuffix = settings.https_port === 443 ? '' : `:${settings.https_port}`;
  return {
    serverName: settings.fqdn,
    requestId: requestIdModel(settings),
    tracing: tracingModel(settings),
    callerAddress: callerAddressModel(settings),
    httpsListen: `${settings.https_port} ssl http2`,
    httpRedirect:
      settings.http_redirect_port === undefined
        ? null
        : {
            listen: String(settings.http_redirect_port),
            target: quotedThenVariable(`https://${settings.fqdn}${portSuffix}`, '$request_uri'),
            requestId: REQUEST_ID_HEADER,
          },
  };
}

function upstreamsModel(settings: Settings): DefaultConfModel['upstreams'] {
  return [
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
  ];
}

/** The `set` lines operators edit: which methods are on, and OpenID Connect's options. */
function switchesModel(settings: Settings): Pick<DefaultConfModel, 'toggles' | 'oidcOptions'> {
  const oidc = settings.open_id_connect;
  return {
    toggles: [
      { name: TOGGLE_VARIABLES.apiKeys, value: flag(settings.api_keys_enabled) },
      { name: TOGGLE_VARIABLES.oidc, value: flag(settings.open_id_connect_enabled) },
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
  };
}

/** nginx's shared dicts and the `set` lines the Lua access code reads for its decisions. */
function decisionCacheModel(settings: Settings): DecisionCacheModel {
  const direct = directSidecar(settings);
  return {
    decisionsDict: NGINX_NAMES.decisionsDict,
    revocationsDict: NGINX_NAMES.revocationsDict,
    metricsDict: NGINX_NAMES.metricsDict,
    size: settings.auth_cache.size,
    maxAge: { name: NGINX_NAMES.maxAgeVariable, value: String(settings.auth_cache.max_age_ms) },
    controlListen: quoted(`unix:${settings.auth_cache.control_socket}`),
    decisionInputs: {
      name: NGINX_NAMES.decisionInputsVariable,
      // A separator no setting can contain (the settings' allow-lists refuse it).
      value: `"${DECISION_VARIABLES.join('|')}"`,
    },
    controlSocket: {
      name: NGINX_NAMES.controlSocketVariable,
      value: quoted(`unix:${settings.auth_cache.control_socket}`),
    },
    keysDict: NGINX_NAMES.keysDict,
    budgetsDict: NGINX_NAMES.budgetsDict,
    limitsDict: NGINX_NAMES.limitsDict,
    sidecar: { name: NGINX_NAMES.sidecarVariable, value: quoted(direct.address) },
    masterArgument: [
      quoted(inConfigDir(settings.config_dir, LAYOUT.sidecarProof)),
      ...(direct.resolve ? [quoted(direct.address)] : []),
    ].join(', '),
    authTimeout: {
      name: NGINX_NAMES.authTimeoutVariable,
      value: String(settings.timeouts.auth_ms),
    },
    failureBudget: {
      name: NGINX_NAMES.failureBudgetVariable,
      value: `"${settings.failure_budget.per_key_id} ${settings.failure_budget.per_address} ${settings.failure_budget.window_s}"`,
    },
  };
}

function keyTableModel(settings: Settings): KeyTableModel | null {
  if (!settings.key_table.enabled) return null;
  return {
    dict: KEY_TABLE.dict,
    size: settings.key_table.size,
    controlPath: KEY_TABLE.controlPath,
    trust: { name: KEY_TABLE.trustVariable, value: String(settings.key_table.trust_s) },
  };
}

/** What nginx answers itself: its headers, its JSON error pages, and the paths kept from the app. */
function answersModel(
  serverHeaders: NameValue[],
): Pick<
  DefaultConfModel,
  | 'serverHeaders'
  | 'hiddenUpstreamHeaders'
  | 'answerHeaders'
  | 'errorPages'
  | 'failuresPath'
  | 'createdPath'
  | 'usagePath'
  | 'limitsPath'
  | 'moduleDirective'
  | 'notFoundBody'
  | 'reservedPaths'
  | 'errorPageFromOutside'
> {
  return {
    serverHeaders,
    hiddenUpstreamHeaders: [REQUEST_ID.header],
    answerHeaders: [
      ...serverHeaders,
      { name: 'X-Content-Type-Options', value: 'nosniff' },
      { name: 'Cache-Control', value: 'no-store' },
    ],
    errorPages,
    failuresPath: CONTROL.failures,
    createdPath: CONTROL.created,
    usagePath: CONTROL.usage,
    limitsPath: CONTROL.limits,
    moduleDirective: NGINX_MODULE.directive,
    notFoundBody: jsonLiteral(
      JSON.parse(answerBody(NGINX_ERROR_PAGES.find((p) => p.nginxStatus === 404)!)),
    ),
    reservedPaths: NGINX_NAMES.reservedPaths.map(({ match, path }) => `${match} ${path}`),
    // The reserved prefix the error locations live under (the template-model test holds them
    // together: an error location outside every reserved prefix could be asked unauthenticated).
    errorPageFromOutside: NGINX_NAMES.reservedPaths.find(({ path }) =>
      NGINX_NAMES.errorLocationPrefix.startsWith(path),
    )!.path,
  };
}

/** The proxied locations: the control socket's two, management (the sidecar), and the app. */
function locationsModel(
  settings: Settings,
): Pick<DefaultConfModel, 'auth' | 'sidecarProbe' | 'management' | 'app'> {
  return {
    auth: {
      path: CONTROL.auth,
      proxyPass: `http://${SIDECAR_UPSTREAM}/auth`,
      readTimeout: `${settings.timeouts.auth_ms}ms`,
      // The Lua code sends exactly the headers the sidecar needs; these keep the pool alive.
      headers: KEEPALIVE_HEADERS,
    },
    sidecarProbe: {
      path: CONTROL.sidecarProbe,
      proxyPass: `http://${SIDECAR_UPSTREAM}${SIDECAR_PROBE.path}`,
      headers: KEEPALIVE_HEADERS,
    },
    management: {
      path: MANAGEMENT_PATH,
      // Without it nginx answers the management prefix without its slash itself, with a 301
      // and an HTML body (a proxied prefix location redirects).
      bare: MANAGEMENT_PATH.slice(0, -1),
      errorPages: managementErrorPages,
      proxyPass: `http://${SIDECAR_UPSTREAM}`,
      proof: SIDECAR_PROOF.variable,
      headers: [
        ...KEEPALIVE_HEADERS,
        ...FORWARDED_HEADERS,
        ...IDENTITY_HEADERS,
        ...SIDECAR_HEADERS,
        // Replaces any the caller sent, as every header above does (empty: none is sent).
        { name: SIDECAR_PROOF.header, value: SIDECAR_PROOF.variable },
        ...traceHeaders(settings),
      ],
    },
    app: {
      proxyPass: `http://${APP_UPSTREAM}`,
      readTimeout: `${settings.timeouts.upstream_read_s}s`,
      // The credential was for the gateway; the app gets the identity instead, never the key
      // or token itself (nothing to leak from the app's logs). An empty value sends no header.
      headers: [
        ...KEEPALIVE_HEADERS,
        ...FORWARDED_HEADERS,
        ...OVERRIDE_HEADERS,
        ...IDENTITY_HEADERS,
        REQUEST_ID_HEADER,
        { name: 'Authorization', value: '""' },
        ...traceHeaders(settings),
      ],
    },
  };
}

/**
 * Where the Lua code can reach the sidecar by itself: a unix socket or an IPv4 literal, which a
 * cosocket connects to as written, or a DNS name (the containers' `gateway:8081`), which nginx's
 * master resolves first (`resolve`), when it loads the configuration, as it resolves the same
 * name in the upstream block (lua/gateway/sidecar/address.lua). An IPv6 literal: empty, and the
 * Lua code asks through the control socket's /auth (one hop more).
 */
function directSidecar(settings: Settings): { address: string; resolve: boolean } {
  const address = settings.upstreams.sidecar;
  if (UNIX_SOCKET.test(address)) return { address, resolve: false };
  const host = address.slice(0, address.lastIndexOf(':'));
  if (IPV4.test(host)) return { address, resolve: false };
  if (DNS_NAME.test(host)) return { address, resolve: true };
  return { address: '', resolve: false };
}

/**
 * The console's content security policy: nothing inline, nothing from elsewhere. `connect-src`
 * ends with the variable the Lua code fills with the OIDC provider's origin (from
 * $oidc_discovery at request time, so an edited default.conf is followed).
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  `connect-src 'self' ${CONSOLE_NGINX.connectOriginVariable}`,
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
].join('; ');

function consoleModel(settings: Settings, serverHeaders: NameValue[]): ConsoleModel {
  return {
    path: CONSOLE_PATH,
    settings: [
      { name: CONSOLE_NGINX.enabledVariable, value: flag(settings.console.enabled) },
      { name: CONSOLE_NGINX.oidcClientIdVariable, value: quoted(settings.console.oidc_client_id) },
      { name: CONSOLE_NGINX.oidcScopeVariable, value: quoted(settings.console.oidc_scope) },
      // Filled by the Lua code on each console request; declared so the CSP header can use it.
      { name: CONSOLE_NGINX.connectOriginVariable, value: '""' },
    ],
    offLocation: CONSOLE_NGINX.offLocation,
    staticRoot: CONSOLE_NGINX.staticRootVariable,
    configPath: CONSOLE_NGINX.configPath,
    headers: [
      ...serverHeaders,
      { name: 'Content-Security-Policy', value: `"${CONSOLE_CSP}"` },
      { name: 'X-Content-Type-Options', value: 'nosniff' },
      { name: 'Referrer-Policy', value: 'no-referrer' },
      // Small files, changed only by an upgrade: revalidated every time, never stale.
      { name: 'Cache-Control', value: 'no-cache' },
    ],
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
