import { describe, expect, test } from 'vitest';
import { parseSettings } from '../../../generator/index.js';
import { CONSOLE_CSP, defaultConfModel } from '../../../generator/template-model.js';

const consoleOf = (raw: unknown) => defaultConfModel(parseSettings(raw)).console;
const header = (raw: unknown, name: string) =>
  consoleOf(raw)
    .headers.filter((h) => h.name === name)
    .map((h) => h.value);

describe("the console's location (issue 14)", () => {
  test('its switch and OIDC client are set lines an operator edits, quoted where free text', () => {
    expect(consoleOf({}).settings).toEqual([
      { name: '$console_enabled', value: 'true' },
      { name: '$console_oidc_client_id', value: '""' },
      { name: '$console_oidc_scope', value: '"openid"' },
      { name: '$console_connect_origin', value: '""' },
    ]);
    const set = consoleOf({
      console: { enabled: false, oidc_client_id: 'gw-console', oidc_scope: 'openid api' },
    }).settings;
    expect(set.slice(0, 3).map((s) => s.value)).toEqual(['false', '"gw-console"', '"openid api"']);
  });

  test('a strict CSP: nothing inline, nothing from elsewhere but the provider Lua names', () => {
    expect(CONSOLE_CSP).toBe(
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; " +
        "connect-src 'self' $console_connect_origin; frame-ancestors 'none'; " +
        "base-uri 'none'; form-action 'self'",
    );
    expect(CONSOLE_CSP).not.toMatch(/unsafe|\*|data:/);
    expect(header({}, 'Content-Security-Policy')).toEqual([`"${CONSOLE_CSP}"`]);
  });

  test('the location, its files, its config answer and the named location used when off', () => {
    const model = consoleOf({});
    expect(model.path).toBe('/console/');
    expect(model.staticRoot).toBe('$gateway_static_root');
    expect(model.configPath).toBe('/console/config.json');
    expect(model.offLocation).toBe('@console_off');
    expect(model.headers).toEqual([
      { name: 'Strict-Transport-Security', value: '"max-age=31536000"' },
      { name: 'X-Request-Id', value: '$gateway_request_id' },
      { name: 'Content-Security-Policy', value: `"${CONSOLE_CSP}"` },
      { name: 'X-Content-Type-Options', value: 'nosniff' },
      { name: 'Referrer-Policy', value: 'no-referrer' },
      { name: 'Cache-Control', value: 'no-cache' },
    ]);
  });

  test("HSTS and the request id are repeated in the location (a location's add_header drops the server's)", () => {
    expect(header({}, 'Strict-Transport-Security')).toEqual(['"max-age=31536000"']);
    expect(header({}, 'X-Request-Id')).toEqual(['$gateway_request_id']);
    expect(header({ hsts_max_age_s: 0 }, 'Strict-Transport-Security')).toEqual([]);
    expect(header({}, 'X-Content-Type-Options')).toEqual(['nosniff']);
    expect(header({}, 'Referrer-Policy')).toEqual(['no-referrer']);
  });
});
