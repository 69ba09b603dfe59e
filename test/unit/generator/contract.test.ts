import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import {
  ALLOWED_METHODS,
  CLIENT_CHANGES_CHANNEL,
  DECISION_VARIABLES,
  FORWARDED_TO_SIDECAR,
  IDENTITY_FROM_SIDECAR,
  NGINX_MODULE,
  REQUIRE_ADMIN_HEADER,
  upstreamHeaderVariable,
} from '../../../common/contract.js';
import {
  C_CONTRACT_PATH,
  cString,
  identifier,
  renderCContract,
} from '../../../generator/c-contract.js';
import {
  LUA_CONTRACT_PATH,
  luaString,
  renderLuaContract,
} from '../../../generator/lua-contract.js';
import { requiresAdmin } from '../../../sidecar/auth/admin-paths.js';
import { readToggles } from '../../../sidecar/auth/method-toggles.js';

// The header contract as nginx renders it must be the one the sidecar reads and answers.

const ALL = [...FORWARDED_TO_SIDECAR, ...IDENTITY_FROM_SIDECAR];

describe('the nginx-sidecar header contract', () => {
  test('every row is an X- header name and an nginx variable, none used twice', () => {
    for (const { header, variable } of ALL) {
      expect(header).toMatch(/^X-[A-Za-z]+(?:-[A-Za-z]+)*$/);
      expect(variable).toMatch(/^\$[a-z_]+$/);
    }
    const headers = ALL.map((r) => r.header.toLowerCase());
    expect(new Set(headers).size).toBe(headers.length);
    expect(new Set(ALL.map((r) => r.variable)).size).toBe(ALL.length);
  });

  // A value of each toggle unlike its default, and how the sidecar shows having read it.
  const TOGGLES: Record<string, [string, (t: ReturnType<typeof readToggles>) => unknown]> = {
    $api_keys_enabled: ['false', (t) => t.apiKeys],
    $open_id_connect_enabled: ['true', (t) => t.oidc],
    $oidc_discovery: ['https://idp/', (t) => t.oidcOptions.discovery],
    $oidc_ssl_verify: ['no', (t) => t.oidcOptions.sslVerify],
    $oidc_accept_unsupported_alg: ['true', (t) => t.oidcOptions.acceptUnsupportedAlg],
    $oidc_accept_none_alg: ['true', (t) => t.oidcOptions.acceptNoneAlg],
    $oidc_redirect_uri: ['https://app/cb', (t) => t.oidcOptions.redirectUri],
    $oidc_client_id_claim: ['azp', (t) => t.oidcOptions.clientIdClaim],
    $oidc_client_name_claim: ['name', (t) => t.oidcOptions.clientNameClaim],
    $oidc_audience: ['gw', (t) => t.oidcOptions.audience],
  };

  test.each(FORWARDED_TO_SIDECAR.filter((r) => r.variable in TOGGLES))(
    'the sidecar reads $header ($variable)',
    ({ header, variable }) => {
      const [value, read] = TOGGLES[variable]!;
      const before = read(readToggles({}));
      const after = read(readToggles({ [header.toLowerCase()]: value }));
      expect(after).not.toEqual(before);
    },
  );

  test('the sidecar reads the original URI from the header nginx sends it in', () => {
    const row = FORWARDED_TO_SIDECAR.find((r) => r.variable === '$request_uri')!;
    expect(requiresAdmin({ [row.header.toLowerCase()]: '/v1/management/' })).toBe(true);
  });

  test('the sidecar requires an admin when nginx sends REQUIRE_ADMIN_HEADER, whatever the path', () => {
    expect(requiresAdmin({ [REQUIRE_ADMIN_HEADER.toLowerCase()]: 'true' })).toBe(true);
  });

  test('the database announces changes on the channel the sidecar LISTENs on', () => {
    const sql = readFileSync(
      new URL('../../../sidecar/db/migrations/0003_api_client_changes.sql', import.meta.url),
      'utf8',
    );
    const channels = [...sql.matchAll(/pg_notify\('([^']*)'/g)].map((m) => m[1]);
    expect(channels.length).toBeGreaterThan(0);
    expect(new Set(channels)).toEqual(new Set([CLIENT_CHANGES_CHANNEL]));
  });

  test('nginx forwards the original method, every toggle and its request id', () => {
    expect(FORWARDED_TO_SIDECAR.map((r) => r.variable).sort()).toEqual(
      [...Object.keys(TOGGLES), '$request_method', '$request_uri', '$gateway_request_id'].sort(),
    );
  });
});

describe('the contract the Lua code runs with', () => {
  // lua/gateway/contract.lua is what nginx executes; the Lua tests (test/lua) prove the Lua
  // code behaves by it. Any change to a name, status or error text here must reach that file.
  test('lua/gateway/contract.lua is exactly what the TypeScript contract generates', () => {
    const root = new URL('../../../', import.meta.url);
    expect(renderLuaContract()).toBe(readFileSync(new URL(LUA_CONTRACT_PATH, root), 'utf8'));
  });

  // nginx-module/gateway_contract.h: the same names for the C module (its build reads it).
  test('nginx-module/gateway_contract.h is generated from common/ (UPDATE_GOLDEN=1 rewrites it)', () => {
    const path = new URL(C_CONTRACT_PATH, new URL('../../../', import.meta.url));
    const expected = renderCContract();
    if (process.env.UPDATE_GOLDEN === '1') writeFileSync(path, expected);
    expect(readFileSync(path, 'utf8')).toBe(expected);
  });

  test("the module's file is the first module its nginx build recipe names, and its key setter a C name", () => {
    const recipe = readFileSync(new URL('../../../nginx-module/config', import.meta.url), 'utf8');
    // nginx names a dynamic module's file after the first of the modules it holds.
    const names = /^ngx_module_name="?([^"\n]+)"?$/m.exec(recipe)?.[1]?.split(' ') ?? [];
    expect(`${names[0]}.so`).toBe(NGINX_MODULE.file);
    expect(names).toContain('ngx_http_gateway_span_log_module');
    expect(identifier(NGINX_MODULE.hmacKeySetter)).toBe(NGINX_MODULE.hmacKeySetter);
    expect(() => identifier('not a name')).toThrow('not a C identifier');
  });

  test('C string literals: plain printable ASCII only, never escaped', () => {
    expect(cString('gateway_keys')).toBe('"gateway_keys"');
    for (const bad of ['a"b', 'a\\b', 'a\nb', 'café']) {
      expect(() => cString(bad)).toThrow('not a plain C string');
    }
  });

  test('a decision depends on the toggles and OIDC options, not on the request', () => {
    expect(DECISION_VARIABLES).toEqual([
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

  test('the methods passed on are those of the spec; others are 405', () => {
    expect(ALLOWED_METHODS).toEqual(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
  });

  test("an upstream header's nginx variable", () => {
    expect(upstreamHeaderVariable('X-Gateway-Client-Row')).toBe(
      '$upstream_http_x_gateway_client_row',
    );
  });
});

describe('Lua string literals in the generated contract', () => {
  test('printable ASCII, quotes and backslashes escaped as Lua reads them', () => {
    expect(luaString('a "b" \\ c~ ')).toBe('"a \\"b\\" \\\\ c~ "');
    expect(luaString('')).toBe('""');
  });

  test.each([
    ['a line break', 'a\nb'],
    ['a NUL at the start', '\u0000ab'],
    ['DEL at the end', 'ab\u007f'],
    ['UTF-8', 'café'],
  ])('%s is refused, never generated', (_, value) => {
    expect(() => luaString(value)).toThrow(`not printable ASCII: ${JSON.stringify(value)}`);
  });
});
