import { describe, expect, test } from 'vitest';
import {
  deriveBaselineConf,
  deriveCacheOffConf,
  deriveRendered,
  listenPorts,
} from '../../bench/stack/baseline-conf.js';
import { LAYOUT, parseSettings, renderConfigFiles } from '../../generator/index.js';

// The gateway's default.conf as the native runner renders it (the bench derives its copies
// from that file on disk), with the plain-HTTP redirect on so a second listen port is covered.
const HOME = '/tmp/gw-bench-x/a';
const CONTROL = `${HOME}/run/nginx-control.sock`;
const renderedConf = (extra: Record<string, unknown> = {}) =>
  renderConfigFiles(
    parseSettings({
      fqdn: 'localhost',
      https_port: 9443,
      http_redirect_port: 9080,
      config_dir: `${HOME}/config`,
      upstreams: { app: `unix:${HOME}/run/app.sock`, sidecar: `unix:${HOME}/run/sidecar.sock` },
      auth_cache: { control_socket: CONTROL },
      ...extra,
    }),
  ).find((f) => f.path === LAYOUT.defaultConf)!.content;
const gatewayConf = renderedConf();

const RUN = '/tmp/gw-bench-x/baseline/run';
const ports = new Map([
  [9443, 20443],
  [9080, 20080],
]);

/** Lines of `after` that differ from `before`'s, and lines of `before` that are gone. */
function diff(before: string, after: string) {
  const a = before.split('\n');
  const b = new Set(after.split('\n'));
  const aSet = new Set(a);
  return {
    removed: a.filter((l) => !b.has(l)).map((l) => l.trim()),
    added: [...b].filter((l) => !aSet.has(l)).map((l) => l.trim()),
  };
}

describe('deriveBaselineConf', () => {
  const derived = deriveBaselineConf(gatewayConf, ports, RUN);

  test('switches authentication off: every access_by_lua_block line goes (server, management and its bare prefix, console), nothing else runs Lua per request', () => {
    expect(gatewayConf.match(/access_by_lua_block/g)).toHaveLength(4);
    expect(derived.text).not.toMatch(/access_by_lua/);
    expect(derived.text).not.toMatch(/auth_request/);
  });

  test('changes nothing else but the ports and the control socket', () => {
    const { removed, added } = diff(gatewayConf, derived.text);
    expect(removed.sort()).toEqual(
      [
        'access_by_lua_block { require("gateway.access").caller() }',
        'access_by_lua_block { require("gateway.access").admin() }',
        'access_by_lua_block { require("gateway.access").admin() }',
        'access_by_lua_block { require("gateway.console").access() }',
        'listen 9443 ssl http2;',
        'listen 9080;',
        `listen "unix:${CONTROL}";`,
        `set $gateway_control_socket "unix:${CONTROL}";`,
      ].sort(),
    );
    expect(added.sort()).toEqual(
      [
        'listen 20443 ssl http2;',
        'listen 20080;',
        `listen "unix:${RUN}/nginx-control.sock";`,
        `set $gateway_control_socket "unix:${RUN}/nginx-control.sock";`,
      ].sort(),
    );
    // The line count drops by exactly the four removed directives.
    expect(derived.text.split('\n').length).toBe(gatewayConf.split('\n').length - 4);
    expect(derived.changes).toHaveLength(8);
    expect(listenPorts(derived.text)).toEqual(listenPorts(gatewayConf).map((p) => ports.get(p)));
  });

  test('refuses what it cannot switch off safely', () => {
    expect(() => deriveBaselineConf('server {\n    auth_request /_auth;\n}', ports, RUN)).toThrow(
      /auth_request/,
    );
    expect(() => deriveBaselineConf('server {\n    listen 9443 ssl;\n}', ports, RUN)).toThrow(
      /no access_by_lua_block/,
    );
    const multiLine = 'server {\n    listen 9443;\n    access_by_lua_block {\n      x()\n    }\n}';
    expect(() => deriveBaselineConf(multiLine, ports, RUN)).toThrow(/one-line/);
    expect(() =>
      deriveBaselineConf(
        'server {\n    listen 7000;\n    access_by_lua_block { x() }\n}',
        ports,
        RUN,
      ),
    ).toThrow(/no port for the copy of "listen 7000;"/);
    // A copy whose socket would be the gateway's own would fight it for the socket.
    expect(() => deriveBaselineConf(gatewayConf, ports, `${HOME}/run`)).toThrow(/gateway's own/);
  });
});

describe('deriveCacheOffConf', () => {
  const derived = deriveCacheOffConf(gatewayConf, ports, RUN);

  test('sets the decision lifetime to 0 and keeps authentication on', () => {
    const { removed, added } = diff(gatewayConf, derived.text);
    expect(removed).toContain('set $auth_cache_max_age_ms 30000;');
    expect(added).toContain('set $auth_cache_max_age_ms 0;');
    expect(derived.text.match(/access_by_lua_block/g)).toHaveLength(4);
    // Besides the lifetime: only the same moves as the baseline's.
    expect(removed).toHaveLength(5);
    expect(added).toHaveLength(5);
    expect(derived.text).toContain(`set $gateway_control_socket "unix:${RUN}/nginx-control.sock";`);
  });

  test('refuses a configuration without the lifetime setting', () => {
    expect(() => deriveCacheOffConf('server {\n    listen 9443;\n}', ports, RUN)).toThrow(
      /auth_cache_max_age_ms/,
    );
  });
});

describe('deriveRendered', () => {
  const traced = renderedConf({
    tracing: { enabled: true, otlp_endpoint: 'http://127.0.0.1:4318/v1/traces' },
  });

  test("without a render, the copy is the gateway's file with only its listeners moved", () => {
    const copy = deriveRendered()(gatewayConf, ports, RUN);
    const { added } = diff(gatewayConf, copy.text);
    expect(added.every((l) => l.includes('20443') || l.includes('20080') || l.includes(RUN))).toBe(
      true,
    );
    expect(copy.changes).toHaveLength(added.length);
  });

  test('with one, the copy is the other render, and its changes list every line it adds', () => {
    const copy = deriveRendered({ same: gatewayConf, changed: traced })(gatewayConf, ports, RUN);
    expect(copy.text).toContain('gateway_span_log 127.0.0.1:4319 ');
    expect(copy.text).toContain('listen 20443 ssl http2;');
    const added = copy.changes.filter((c) => c.startsWith('+ '));
    expect(added.length).toBeGreaterThan(10);
    expect(added).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^\+ gateway_span_log 127\.0\.0\.1:4319 "\$gateway_trace_id /),
        expect.stringMatching(/^\+ gateway_span_log off;$/),
      ]),
    );
  });

  test("refuses when the settings rendered again are not the gateway's file", () => {
    const drifted = { same: `${gatewayConf}\n# edited`, changed: traced };
    expect(() => deriveRendered(drifted)(gatewayConf, ports, RUN)).toThrow(/do not give/);
  });
});
