import { describe, expect, test } from 'vitest';
import { DEFAULT_METRICS_LISTEN, parseMetricsListen } from '../../../sidecar/config.js';
import { SidecarMetrics } from '../../../sidecar/metrics/sidecar-metrics.js';
import { parseCounters } from '../../../sidecar/nginx/counters.js';
import { ProviderHttp } from '../../../sidecar/oidc/provider-http.js';
import { serve } from '../support/serve.js';

describe('METRICS_LISTEN', () => {
  test('unset or empty: loopback 9464, never every interface', () => {
    expect(DEFAULT_METRICS_LISTEN).toBe('127.0.0.1:9464');
    expect(parseMetricsListen(undefined)).toEqual({ host: '127.0.0.1', port: 9464 });
    expect(parseMetricsListen(' ')).toEqual({ host: '127.0.0.1', port: 9464 });
  });

  test('host:port, [ipv6]:port, a unix socket path, or off', () => {
    expect(parseMetricsListen('0.0.0.0:9100')).toEqual({ host: '0.0.0.0', port: 9100 });
    expect(parseMetricsListen('[::1]:9464')).toEqual({ host: '::1', port: 9464 });
    expect(parseMetricsListen('gateway:9464')).toEqual({ host: 'gateway', port: 9464 });
    expect(parseMetricsListen('/run/gw/metrics.sock')).toEqual({ socket: '/run/gw/metrics.sock' });
    expect(parseMetricsListen('off')).toBeNull();
  });

  test('anything else is refused, naming the variable', () => {
    for (const bad of ['9464', 'host:', 'host:70000', 'http://x:1', 'rel/path', 'a b:1']) {
      expect(() => parseMetricsListen(bad), bad).toThrow(/METRICS_LISTEN/);
    }
  });
});

describe("nginx's counters from the control socket", () => {
  test('known counters and refusals by status are kept; anything else is dropped', () => {
    expect(
      parseCounters(
        JSON.stringify({
          cache_hit: 12,
          cache_miss: 3,
          refused_401: 2,
          refused_abc: 1,
          other: 5,
          cache_eviction: -1,
          cache_store_failed: 'x',
        }),
      ),
    ).toEqual({ cache_hit: 12, cache_miss: 3, refused_401: 2 });
  });

  test('not a JSON object: no counters at all', () => {
    for (const text of ['', 'nope', '[1]', 'null', '3']) expect(parseCounters(text)).toBeNull();
  });
});

describe('OpenID Connect fetches', () => {
  test('every fetch is counted by resource and result', async () => {
    const metrics = new SidecarMetrics();
    const http = new ProviderHttp([], 2_000, (resource, ok) => metrics.fetched(resource, ok));
    const provider = await serve((req, res) => {
      const ok = req.url === '/jwks';
      res.writeHead(ok ? 200 : 500, { 'Content-Type': 'application/json' });
      res.end(ok ? '{"keys":[]}' : '{}');
    });
    try {
      await expect(
        http.getJson(new URL(`${provider.url}/jwks`), true, 'key set', 'jwks'),
      ).resolves.toEqual({
        keys: [],
      });
      await expect(
        http.getJson(new URL(`${provider.url}/broken`), true, 'discovery', 'discovery'),
      ).rejects.toThrow(/HTTP 500/);
    } finally {
      await provider.close();
    }
    const text = await metrics.text();
    expect(text).toContain('gateway_oidc_fetches_total{resource="jwks",result="ok"} 1');
    expect(text).toContain('gateway_oidc_fetches_total{resource="discovery",result="error"} 1');
  });
});
