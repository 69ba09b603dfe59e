import { describe, expect, test } from 'vitest';
import {
  FORWARDED_TO_SIDECAR,
  IDENTITY_FROM_SIDECAR,
  REFUSAL_FROM_SIDECAR,
  upstreamHeaderVariable,
} from '../../../generator/contract.js';
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
    for (const location of [model.app, model.management, model.auth, model.adminAuth]) {
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

describe('the auth locations', () => {
  test('both ask the sidecar /auth, without a body, with every forwarded toggle', () => {
    for (const location of [model.auth, model.adminAuth]) {
      expect(location.proxyPass).toBe('http://gateway_sidecar/auth');
      expect(valuesOf(location.headers, 'Content-Length')).toEqual(['""']);
      expect(valuesOf(location.headers, 'Connection')).toEqual(['""']);
      for (const { header, variable } of FORWARDED_TO_SIDECAR) {
        expect(valuesOf(location.headers, header)).toEqual([variable]);
      }
    }
  });

  test('only the management one says an admin is required', () => {
    expect(valuesOf(model.adminAuth.headers, 'X-Gateway-Require-Admin')).toEqual(['true']);
    expect(valuesOf(model.auth.headers, 'X-Gateway-Require-Admin')).toEqual([]);
  });

  test('the management API also gets the toggles and the identity', () => {
    for (const { header, variable } of [...FORWARDED_TO_SIDECAR, ...IDENTITY_FROM_SIDECAR]) {
      expect(valuesOf(model.management.headers, header)).toEqual([variable]);
    }
  });

  test('identity and refusal details are read from the sidecar answer', () => {
    expect(model.authResults).toEqual(
      [...IDENTITY_FROM_SIDECAR, ...REFUSAL_FROM_SIDECAR].map((r) => ({
        name: r.variable,
        value: upstreamHeaderVariable(r.header),
      })),
    );
    expect(model.authResults).toContainEqual({
      name: '$auth_jwt_error',
      value: '$upstream_http_x_jwt_error',
    });
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

describe('the auth answer cache', () => {
  /** A window's label in the map: the second, then a letter for the window within it. */
  const label = (letter: string) => `"\${auth_second}${letter}"`;

  test('is keyed by the time window, every decision variable and the credential', () => {
    const cache = model.authCache!;
    expect(cache.windowMs).toBe(500);
    expect(cache.path).toBe('"/var/cache/gateway-auth"');
    const parts = cache.key.slice(1, -1).split('|');
    expect(parts[0]).toBe('$auth_cache_window');
    expect(parts.at(-1)).toBe('$http_authorization');
    expect(parts.slice(1, -1)).toEqual([
      '$api_keys_enabled',
      '$open_id_connect_enabled',
      '$oidc_discovery',
      '$oidc_ssl_verify',
      '$oidc_accept_unsupported_alg',
      '$oidc_accept_none_alg',
      '$oidc_client_id_claim',
      '$oidc_client_name_claim',
      '$oidc_audience',
    ]);
  });

  test('splits each second into windows of the configured length', () => {
    const windows = (ms: number) =>
      defaultConfModel(parseSettings({ auth_cache: { window_ms: ms } })).authCache?.windows;
    expect(windows(500)).toEqual([
      { name: '"~^(?<auth_second>\\d+)\\.[0-4]"', value: label('a') },
      { name: '"~^(?<auth_second>\\d+)\\.[5-9]"', value: label('b') },
    ]);
    expect(windows(100)).toHaveLength(10);
    expect(windows(100)?.[9]).toEqual({
      name: '"~^(?<auth_second>\\d+)\\.9"',
      value: label('j'),
    });
    expect(windows(200)?.map((w) => w.name)).toEqual(
      ['[0-1]', '[2-3]', '[4-5]', '[6-7]', '[8-9]'].map((d) => `"~^(?<auth_second>\\d+)\\.${d}"`),
    );
    expect(windows(1000)).toEqual([
      { name: '"~^(?<auth_second>\\d+)\\.[0-9]"', value: label('a') },
    ]);
  });

  test('a window of 0 turns the cache off', () => {
    expect(defaultConfModel(parseSettings({ auth_cache: { window_ms: 0 } })).authCache).toBeNull();
  });
});

describe("nginx's own error answers", () => {
  test('are single-quoted JSON documents in the one error shape', () => {
    const codes = Object.values(model.errors).map((literal) => {
      expect(literal.startsWith("'") && literal.endsWith("'")).toBe(true);
      const body = JSON.parse(literal.slice(1, -1)) as {
        errors: { code: string; message: string }[];
      };
      expect(Object.keys(body)).toEqual(['errors']);
      expect(body.errors).toHaveLength(1);
      expect(body.errors[0]!.message.length).toBeGreaterThan(10);
      return body.errors[0]!.code;
    });
    expect(codes).toEqual([
      'BAD_REQUEST',
      'HEADERS_TOO_LARGE',
      'PAYLOAD_TOO_LARGE',
      'URI_TOO_LONG',
      'UNAUTHORIZED',
      'FORBIDDEN',
      'AUTH_UNAVAILABLE',
      'UPSTREAM_UNAVAILABLE',
    ]);
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
    expect(on(8443)).toEqual({ listen: '8080', target: '"https://gw.example:8443$request_uri"' });
    expect(on(443)).toEqual({ listen: '8080', target: '"https://gw.example$request_uri"' });
  });
});
