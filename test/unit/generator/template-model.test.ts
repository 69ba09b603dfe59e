import { describe, expect, test } from 'vitest';
import { FORWARDED_TO_SIDECAR, IDENTITY_FROM_SIDECAR } from '../../../common/contract.js';
import { parseSettings } from '../../../generator/index.js';
import { defaultConfModel, type NameValue } from '../../../generator/template-model.js';

const model = defaultConfModel(parseSettings({}));
const names = (headers: NameValue[]) => headers.map((h) => h.name);
const valuesOf = (headers: NameValue[], name: string) =>
  headers.filter((h) => h.name.toLowerCase() === name.toLowerCase()).map((h) => h.value);

describe('what the application receives (header stripping)', () => {
  test('never the credential: Authorization is set empty, which removes it', () => {
    expect(valuesOf(model.app.headers, 'Authorization')).toEqual(['""']);
  });

  test('the identity only from the sidecar answer, replacing what the caller sent', () => {
    expect(valuesOf(model.app.headers, 'X-Client-Id')).toEqual(['$client_id']);
    expect(valuesOf(model.app.headers, 'X-Client-Name')).toEqual(['$client_name']);
    expect(valuesOf(model.app.headers, 'X-Client-Is-Admin')).toEqual(['$client_is_admin']);
    expect(valuesOf(model.app.headers, 'X-Auth-Method')).toEqual(['$client_auth_method']);
  });

  test("the caller's own X-Forwarded-For is replaced by the peer address", () => {
    for (const location of [model.app, model.management]) {
      expect(valuesOf(location.headers, 'X-Forwarded-For')).toEqual(['$remote_addr']);
      expect(valuesOf(location.headers, 'X-Forwarded-Proto')).toEqual(['https']);
      expect(valuesOf(location.headers, 'Host')).toEqual(['$host']);
      expect(valuesOf(location.headers, 'Connection')).toEqual(['""']);
    }
  });

  test('no header is set twice in one location', () => {
    for (const location of [model.app, model.management, model.auth]) {
      const lower = names(location.headers).map((n) => n.toLowerCase());
      expect(new Set(lower).size).toBe(lower.length);
    }
  });

  test('the application is the app upstream, the management API the sidecar', () => {
    expect(model.app.proxyPass).toBe('http://gateway_app');
    expect(model.management).toMatchObject({
      path: '/v1/management/',
      proxyPass: 'http://gateway_sidecar',
    });
    expect(model.upstreams.map((u) => u.name)).toEqual(['gateway_app', 'gateway_sidecar']);
  });
});

describe('asking the sidecar (the control socket)', () => {
  test("/auth proxies to the sidecar's /auth, keeping the pool alive, within timeouts.auth_ms", () => {
    expect(model.auth).toEqual({
      path: '/auth',
      proxyPass: 'http://gateway_sidecar/auth',
      readTimeout: '3000ms',
      headers: [{ name: 'Connection', value: '""' }],
    });
    const m = defaultConfModel(parseSettings({ timeouts: { auth_ms: 250, upstream_read_s: 7 } }));
    expect(m.auth.readTimeout).toBe('250ms');
    expect(m.app.readTimeout).toBe('7s');
    expect(model.app.readTimeout).toBe('60s');
  });

  test('the control server listens on the configured unix socket, which Lua also reads', () => {
    expect(model.decisionCache.controlListen).toBe('"unix:/run/gateway-control/nginx.sock"');
    expect(model.decisionCache.controlSocket).toEqual({
      name: '$gateway_control_socket',
      value: '"unix:/run/gateway-control/nginx.sock"',
    });
    const m = defaultConfModel(
      parseSettings({ auth_cache: { control_socket: '/tmp/gw ctl/n.sock' } }),
    );
    expect(m.decisionCache.controlListen).toBe('"unix:/tmp/gw ctl/n.sock"');
    expect(m.decisionCache.controlSocket.value).toBe('"unix:/tmp/gw ctl/n.sock"');
  });

  test('the management API also gets the toggles and the identity', () => {
    for (const { header, variable } of [...FORWARDED_TO_SIDECAR, ...IDENTITY_FROM_SIDECAR]) {
      expect(valuesOf(model.management.headers, header)).toEqual([variable]);
    }
  });

  test('the identity variables start empty and are the ones the app and management receive', () => {
    expect(model.identityVariables).toEqual([
      '$client_id',
      '$client_name',
      '$client_is_admin',
      '$client_auth_method',
    ]);
    for (const { header, variable } of IDENTITY_FROM_SIDECAR) {
      expect(valuesOf(model.app.headers, header)).toEqual([variable]);
    }
  });
});

describe('the method toggles and OIDC options', () => {
  test('API keys on, OIDC off, verification on by default', () => {
    expect(model.toggles).toEqual([
      { name: '$api_keys_enabled', value: 'true' },
      { name: '$open_id_connect_enabled', value: 'false' },
    ]);
    expect(model.oidcOptions).toEqual([
      { name: '$oidc_discovery', value: '""' },
      { name: '$oidc_ssl_verify', value: '"yes"' },
      { name: '$oidc_accept_unsupported_alg', value: 'false' },
      { name: '$oidc_accept_none_alg', value: 'false' },
      { name: '$oidc_redirect_uri', value: '""' },
      { name: '$oidc_client_id_claim', value: '"sub"' },
      { name: '$oidc_client_name_claim', value: '"sub"' },
      { name: '$oidc_audience', value: '""' },
    ]);
  });

  test('settings reach the toggles', () => {
    const m = defaultConfModel(
      parseSettings({
        api_keys_enabled: false,
        open_id_connect_enabled: true,
        open_id_connect: {
          discovery: 'https://idp.example/.well-known/openid-configuration',
          ssl_verify: 'no',
          accept_unsupported_alg: true,
          accept_none_alg: true,
          redirect_uri: 'https://app.example/cb',
          client_id_claim: 'azp',
          client_name_claim: 'name',
          audience: 'gw',
        },
      }),
    );
    expect(m.toggles.map((t) => t.value)).toEqual(['false', 'true']);
    expect(m.oidcOptions.map((o) => o.value)).toEqual([
      '"https://idp.example/.well-known/openid-configuration"',
      '"no"',
      'true',
      'true',
      '"https://app.example/cb"',
      '"azp"',
      '"name"',
      '"gw"',
    ]);
  });
});

describe('the miss path (docs/decisions/20261125-miss-path.md)', () => {
  test('key records and failure budgets have dicts of their own', () => {
    expect(model.decisionCache.keysDict).toBe('gateway_keys');
    expect(model.decisionCache.budgetsDict).toBe('gateway_budgets');
    expect(model.failuresPath).toBe('/failures');
  });

  test('the Lua code asks a sidecar directly on a unix socket, an IPv4 address or a DNS name the master resolves; an IPv6 literal through the control socket', () => {
    const cacheOf = (sidecar: string) =>
      defaultConfModel(parseSettings({ upstreams: { sidecar } })).decisionCache;
    const sidecarOf = (sidecar: string) => cacheOf(sidecar).sidecar;
    const masterOf = (sidecar: string) => cacheOf(sidecar).masterArgument;
    expect(sidecarOf('unix:/run/gw/sidecar.sock')).toEqual({
      name: '$gateway_sidecar',
      value: '"unix:/run/gw/sidecar.sock"',
    });
    expect(sidecarOf('10.1.2.3:8081').value).toBe('"10.1.2.3:8081"');
    expect(model.decisionCache.sidecar.value).toBe('"127.0.0.1:8081"');
    expect(sidecarOf('gateway:8081').value).toBe('"gateway:8081"');
    // A name that merely looks like digits in places is still a name.
    expect(sidecarOf('10.1.2.3.example:8081').value).toBe('"10.1.2.3.example:8081"');
    expect(sidecarOf('[::1]:8081').value).toBe('""');
    // The proof file always (the master reads it), then only a name, for the master to resolve.
    const proof = '"/etc/config/nginx/conf.d/sidecar-proof.key"';
    expect(masterOf('gateway:8081')).toBe(`${proof}, "gateway:8081"`);
    expect(masterOf('10.1.2.3.example:8081')).toBe(`${proof}, "10.1.2.3.example:8081"`);
    expect(model.decisionCache.masterArgument).toBe(proof);
    expect(masterOf('unix:/run/gw/sidecar.sock')).toBe(proof);
    expect(masterOf('[::1]:8081')).toBe(proof);
  });

  test('the ask times out after timeouts.auth_ms; budgets as "<per key id> <per address> <window>"', () => {
    expect(model.decisionCache.authTimeout).toEqual({
      name: '$gateway_auth_timeout_ms',
      value: '3000',
    });
    expect(model.decisionCache.failureBudget).toEqual({
      name: '$gateway_failure_budget',
      value: '"20 200 60"',
    });
    const m = defaultConfModel(
      parseSettings({
        timeouts: { auth_ms: 250 },
        failure_budget: { per_key_id: 0, per_address: 7, window_s: 5 },
      }),
    );
    expect(m.decisionCache.authTimeout.value).toBe('250');
    expect(m.decisionCache.failureBudget.value).toBe('"0 7 5"');
  });
});

describe('the decision cache', () => {
  test('two shared dicts of the configured size, reused for max_age_ms', () => {
    expect(model.decisionCache).toMatchObject({
      decisionsDict: 'gateway_decisions',
      revocationsDict: 'gateway_revocations',
      size: '10m',
      maxAge: { name: '$auth_cache_max_age_ms', value: '30000' },
    });
    const m = defaultConfModel(parseSettings({ auth_cache: { max_age_ms: 0, size: '512k' } }));
    expect(m.decisionCache.size).toBe('512k');
    expect(m.decisionCache.maxAge.value).toBe('0');
  });

  test('is keyed by every setting a decision depends on, joined by nginx into one variable', () => {
    expect(model.decisionCache.decisionInputs).toEqual({
      name: '$gateway_decision_inputs',
      value: `"${[
        '$api_keys_enabled',
        '$open_id_connect_enabled',
        '$oidc_discovery',
        '$oidc_ssl_verify',
        '$oidc_accept_unsupported_alg',
        '$oidc_accept_none_alg',
        '$oidc_client_id_claim',
        '$oidc_client_name_claim',
        '$oidc_audience',
      ].join('|')}"`,
    });
  });
});

describe("nginx's own error answers", () => {
  const decode = (literal: string) => {
    expect(literal.startsWith("'") && literal.endsWith("'")).toBe(true);
    return JSON.parse(literal.slice(1, -1)) as unknown;
  };

  test('each nginx status has an internal location answering its status and JSON body', () => {
    expect(
      model.errorPages.map((p) => ({
        nginxStatus: p.nginxStatus,
        status: p.status,
        path: p.path,
        body: decode(p.body),
      })),
    ).toEqual(
      [
        [
          400,
          400,
          'BAD_REQUEST',
          'The request is malformed (for example a repeated Authorization header).',
        ],
        [404, 404, 'NOT_FOUND', 'No such path on this gateway.'],
        [405, 405, 'METHOD_NOT_ALLOWED', 'This method is not allowed.'],
        [408, 408, 'REQUEST_TIMEOUT', 'The request took too long.'],
        [411, 411, 'LENGTH_REQUIRED', 'The request body needs a Content-Length.'],
        [413, 413, 'PAYLOAD_TOO_LARGE', 'The request body is too large.'],
        [414, 414, 'URI_TOO_LONG', 'The request URI is too long.'],
        [494, 431, 'HEADERS_TOO_LARGE', 'The request headers are too large.'],
        [497, 400, 'HTTPS_REQUIRED', 'This port speaks HTTPS only.'],
        [500, 500, 'INTERNAL', 'Internal error.'],
        [
          501,
          501,
          'NOT_IMPLEMENTED',
          'The request uses a feature this gateway does not implement (for example a transfer encoding).',
        ],
        [
          502,
          502,
          'UPSTREAM_UNAVAILABLE',
          'The service behind the gateway is unavailable; try again later.',
        ],
        [
          503,
          503,
          'AUTH_UNAVAILABLE',
          'The authentication service is unavailable; try again later.',
        ],
        [
          504,
          504,
          'UPSTREAM_TIMEOUT',
          'The service behind the gateway did not answer in time; try again later.',
        ],
        [505, 505, 'HTTP_VERSION_NOT_SUPPORTED', 'This HTTP version is not supported.'],
      ].map(([nginxStatus, status, code, message]) => ({
        nginxStatus,
        status,
        path: `/_gateway/errors/${nginxStatus}`,
        body: { errors: [{ code, message }] },
      })),
    );
  });

  test('an unknown path is the JSON 404', () => {
    expect(decode(model.notFoundBody)).toEqual({
      errors: [{ code: 'NOT_FOUND', message: 'No such path on this gateway.' }],
    });
  });

  test("the gateway's own paths and the old auth locations are reserved", () => {
    expect(model.reservedPaths).toEqual(['^~ /_gateway/', '= /_auth', '= /_auth_admin']);
  });

  test('the management prefix without its slash has its own location', () => {
    expect(model.management.bare).toBe('/v1/management');
  });

  test('an error location asked from outside goes to the reserved prefix it lives under', () => {
    expect(model.errorPageFromOutside).toBe('/_gateway/');
    expect(model.reservedPaths).toContain(`^~ ${model.errorPageFromOutside}`);
    for (const page of model.errorPages) {
      expect(page.path.startsWith(model.errorPageFromOutside)).toBe(true);
    }
  });
});

describe('security headers', () => {
  const requestId = { name: 'X-Request-Id', value: '$gateway_request_id' };

  test('HSTS on every answer by default (one year); nosniff and no-store on nginx answers', () => {
    const hsts = { name: 'Strict-Transport-Security', value: '"max-age=31536000"' };
    expect(model.serverHeaders).toEqual([hsts, requestId]);
    expect(model.answerHeaders).toEqual([
      hsts,
      requestId,
      { name: 'X-Content-Type-Options', value: 'nosniff' },
      { name: 'Cache-Control', value: 'no-store' },
    ]);
  });

  test('hsts_max_age_s sets the age; 0 sends no HSTS at all', () => {
    const at = (s: number) => defaultConfModel(parseSettings({ hsts_max_age_s: s }));
    expect(at(1).serverHeaders).toEqual([
      { name: 'Strict-Transport-Security', value: '"max-age=1"' },
      requestId,
    ]);
    expect(at(0).serverHeaders).toEqual([requestId]);
    expect(at(0).answerHeaders.map((h) => h.name)).toEqual([
      'X-Request-Id',
      'X-Content-Type-Options',
      'Cache-Control',
    ]);
  });
});

describe('request ids', () => {
  test("nginx's request id reaches the app and the sidecar; the upstream's own is dropped", () => {
    const requestId = { name: 'X-Request-Id', value: '$gateway_request_id' };
    expect(model.app.headers).toContainEqual(requestId);
    expect(model.management.headers).toContainEqual(requestId);
    expect(model.hiddenUpstreamHeaders).toEqual(['X-Request-Id']);
  });
});

describe('listeners', () => {
  test('HTTPS with HTTP/2 on the configured port, no plain HTTP by default', () => {
    expect(model.httpsListen).toBe('443 ssl http2');
    expect(model.httpRedirect).toBeNull();
    expect(model.serverName).toBe('localhost');
    expect(model.sslConfInclude).toBe('"/etc/config/nginx/ssl/ssl.conf"');
  });

  test('the redirect names the port unless it is 443', () => {
    const on = (https_port: number) =>
      defaultConfModel(parseSettings({ fqdn: 'gw.example', https_port, http_redirect_port: 8080 }))
        .httpRedirect;
    expect(on(8443)).toMatchObject({
      listen: '8080',
      target: '"https://gw.example:8443$request_uri"',
    });
    expect(on(443)).toMatchObject({ listen: '8080', target: '"https://gw.example$request_uri"' });
    expect(on(443)?.requestId).toEqual({ name: 'X-Request-Id', value: '$gateway_request_id' });
  });
});

describe("the key table's replica (docs/decisions/20261127-key-table-replica.md)", () => {
  test('on by default: its dict, size, control location and trust', () => {
    expect(model.keyTable).toEqual({
      dict: 'gateway_key_table',
      size: '64m',
      controlPath: '/key-table',
      trust: { name: '$key_table_trust_s', value: '900' },
    });
  });

  test('the settings size it and bound its trust; off renders none of it', () => {
    const m = defaultConfModel(parseSettings({ key_table: { size: '160m', trust_s: 60 } }));
    expect(m.keyTable?.size).toBe('160m');
    expect(m.keyTable?.trust).toEqual({ name: '$key_table_trust_s', value: '60' });
    expect(defaultConfModel(parseSettings({ key_table: { enabled: false } })).keyTable).toBeNull();
    expect(() => parseSettings({ key_table: { trust_s: 0 } })).toThrow();
    expect(() => parseSettings({ key_table: { size: '64' } })).toThrow();
  });
});

describe("management's own error pages", () => {
  test("the server's pages again, with nginx's 502 and 504 (the sidecar gone or silent) answered as its 503", () => {
    const page = (status: number) => model.errorPages.find((p) => p.nginxStatus === status)!;
    const unavailable = page(503);
    expect(unavailable.status).toBe(503);
    expect(model.management.errorPages.map((p) => p.nginxStatus)).toEqual(
      model.errorPages.map((p) => p.nginxStatus),
    );
    for (const p of model.management.errorPages) {
      if (p.nginxStatus === 502 || p.nginxStatus === 504) {
        expect(p).toEqual({ ...page(p.nginxStatus), status: 503, path: unavailable.path });
      } else expect(p).toEqual(page(p.nginxStatus));
    }
    // The server's own stay as they are: the application's 502 is still UPSTREAM_UNAVAILABLE.
    expect(page(502)).toMatchObject({ status: 502, path: '/_gateway/errors/502' });
    expect(page(504)).toMatchObject({ status: 504, path: '/_gateway/errors/504' });
  });
});

describe('override headers (issue 53)', () => {
  test('every header a framework takes a method or URL from is sent empty to the app, on every location that reaches it', () => {
    const names = [
      'X-HTTP-Method-Override',
      'X-HTTP-Method',
      'X-Method-Override',
      'X-Original-URL',
      'X-Rewrite-URL',
      'X-Forwarded-Host',
      'X-Forwarded-Prefix',
      'Forwarded',
    ];
    for (const name of names) {
      expect(model.app.headers).toContainEqual({ name, value: '""' });
    }
  });
});

describe('trace context (tracing.*, docs/decisions/20261202-trace-context.md)', () => {
  const traced = (tracing: object, trusted: string[] = []) =>
    defaultConfModel(
      parseSettings({
        tracing: { enabled: true, ...tracing },
        request_id: { trusted_proxies: trusted },
      }),
    );
  // The map's regex as nginx gets it: the quotes and PCRE's `~` taken off (JS reads the rest alike).
  const keepRegex = (keep: string) => new RegExp(keep.slice(2, -1));
  const traceId = 'a'.repeat(32);
  const parentId = 'b'.repeat(16);

  test('off by default: no maps and no trace header toward the app or the sidecar', () => {
    expect(model.tracing).toBeNull();
    for (const location of [model.app, model.management]) {
      expect(valuesOf(location.headers, 'traceparent')).toEqual([]);
      expect(valuesOf(location.headers, 'tracestate')).toEqual([]);
    }
  });

  test("on: the app and the management API get the gateway's traceparent and the kept tracestate", () => {
    const m = traced({});
    for (const location of [m.app, m.management]) {
      expect(valuesOf(location.headers, 'traceparent')).toEqual(['$gateway_traceparent']);
      expect(valuesOf(location.headers, 'tracestate')).toEqual(['$gateway_tracestate']);
      const lower = names(location.headers).map((n) => n.toLowerCase());
      expect(new Set(lower).size).toBe(lower.length);
    }
  });

  test("a caller's traceparent is weighed only when a proxy is trusted", () => {
    expect(traced({}).tracing!.source).toBe('"0:$http_traceparent"');
    expect(traced({}, ['10.0.0.0/8']).tracing!.source).toBe(
      '"$gateway_request_id_trusted_peer:$http_traceparent"',
    );
  });

  test('only a well-formed version-00 traceparent from a trusted peer is kept, whole, as the capture', () => {
    const t = traced({}).tracing!;
    expect(t.capture).toBe('$gateway_traceparent_in');
    expect(t.generated).toBe('$request_id');
    const keep = keepRegex(t.keep);
    const good = `00-${traceId}-${parentId}-01`;
    expect(keep.exec(`1:${good}`)?.groups).toEqual({ gateway_traceparent_in: good });
    expect(keep.test(`1:00-${traceId}-${parentId}-00`)).toBe(true);
    for (const bad of [
      `0:${good}`, // not a trusted peer
      `1:${good}x`,
      `x1:${good}`,
      `1:01-${traceId}-${parentId}-01`, // another version
      `1:00-${'0'.repeat(32)}-${parentId}-01`, // all-zero trace id
      `1:00-${traceId}-${'0'.repeat(16)}-01`, // all-zero parent id
      `1:00-${'A'.repeat(32)}-${parentId}-01`, // uppercase
      `1:00-${traceId.slice(1)}-${parentId}-01`,
      `1:00-${traceId}-${parentId.slice(1)}-01`,
      `1:00-${traceId}-${parentId}-1`,
      `1:00-${traceId}-${parentId}-0g`,
      '1:',
    ]) {
      expect(keep.test(bad), bad).toBe(false);
    }
  });

  test("sample_ratio becomes split_clients' percentage, none at 0", () => {
    expect(traced({}).tracing!.samplePercent).toBe('100.00%');
    expect(traced({ sample_ratio: 0.25 }).tracing!.samplePercent).toBe('25.00%');
    expect(traced({ sample_ratio: 0.0001 }).tracing!.samplePercent).toBe('0.01%');
    expect(traced({ sample_ratio: 0 }).tracing!.samplePercent).toBeNull();
  });

  test("nginx's span records go out only with an OTLP endpoint, to nginx_spans_to, by the module", () => {
    expect(traced({}).tracing!.spans).toBeNull();
    const spans = traced({
      otlp_endpoint: 'http://collector:4318/v1/traces',
      nginx_spans_to: '127.0.0.1:5000',
    }).tracing!.spans!;
    expect(spans.target).toBe('127.0.0.1:5000');
    expect(spans.directive).toBe('gateway_span_log');
  });

  test("a span record is the span's variables in the contract's order, the path last, never the query string", () => {
    const { record } = traced({ otlp_endpoint: 'http://collector:4318/v1/traces' }).tracing!.spans!;
    expect(record).toBe(
      '"$gateway_trace_id $gateway_span_id $gateway_trace_parent_in $msec $request_time' +
        ' $request_method $status $client_auth_method $client_id $uri"',
    );
  });
});

describe('control locations', () => {
  test("the fleet's rate limit counts are exchanged on the control socket's /limits", () => {
    expect(model.limitsPath).toBe('/limits');
    expect(model.usagePath).not.toBe(model.limitsPath);
  });
});
