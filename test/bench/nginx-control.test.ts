import { describe, expect, test } from 'vitest';
import { keyTableGauges } from '../../bench/scale/distinct-keys.js';
import { balancerConfig } from '../../bench/stack/balancer.js';
import { counterGrowth, sharedMappings, withUsedBytes } from '../../bench/stack/nginx-control.js';

describe('what the bench reads of nginx', () => {
  test('counter growth keeps what grew, counts an absent counter as 0, and needs both reads', () => {
    expect(
      counterGrowth({ cache_miss: 3, key_hit: 10 }, { cache_miss: 3, key_hit: 15, refused_401: 2 }),
    ).toEqual({
      key_hit: 5,
      refused_401: 2,
    });
    expect(counterGrowth(null, { cache_miss: 1 })).toBeNull();
    expect(counterGrowth({}, null)).toBeNull();
  });

  test("the key table's used bytes are capacity less free; without a capacity there are none", () => {
    const state = {
      phase: 'complete' as const,
      position: 'ab12:42',
      records: 1000,
      full: false,
      trustedUntil: null,
      liveUntil: null,
      loadSeconds: 0.8,
      capacityBytes: 67_108_864,
      freeBytes: 66_000_000,
    };
    expect(withUsedBytes(state)).toMatchObject({ records: 1000, usedBytes: 1_108_864 });
    expect(withUsedBytes({ ...state, capacityBytes: null })).toBeNull();
    expect(withUsedBytes({ ...state, freeBytes: null })).toBeNull();
  });

  test("nginx's shared zones are the shared /dev/zero mappings of smaps, nothing else", () => {
    const smaps = [
      '55d0c0a00000-55d0c0b00000 r-xp 00000000 fe:01 1234   /usr/sbin/nginx',
      'Size:               1024 kB',
      'Rss:                 900 kB',
      '7f0000000000-7f0010000000 rw-s 00000000 00:01 5678   /dev/zero (deleted)',
      'Size:             262144 kB',
      'KernelPageSize:        4 kB',
      'Rss:               131072 kB',
      'Pss:               65536 kB',
      '7f0010000000-7f0010a00000 rw-s 00000000 00:01 5679   /dev/zero (deleted)',
      'Size:              10240 kB',
      'Rss:                  16 kB',
      '7f0020000000-7f0020100000 rw-p 00000000 00:00 0 ',
      'Size:               1024 kB',
      'Rss:                1024 kB',
      '7f0030000000-7f0030001000 rw-s 00000000 00:05 9    /SYSV00000000 (deleted)',
      'Size:                  4 kB',
      'Rss:                   4 kB',
    ].join('\n');
    expect(sharedMappings(smaps)).toEqual([
      { sizeKb: 262_144, rssKb: 131_072 },
      { sizeKb: 10_240, rssKb: 16 },
      { sizeKb: 4, rssKb: 4 },
    ]);
  });

  test("the sidecar's key-table gauges are picked out of its Prometheus text", () => {
    const text = [
      '# HELP gateway_key_table_records Records held.',
      '# TYPE gateway_key_table_records gauge',
      'gateway_key_table_records 1000000',
      'gateway_key_table_complete 1',
      'gateway_key_table_load_seconds 12.5',
      'gateway_nginx_up 1',
      'gateway_key_table_lag_seconds{pair="a"} 3',
    ].join('\n');
    expect(keyTableGauges(text)).toEqual({
      gateway_key_table_records: 1_000_000,
      gateway_key_table_complete: 1,
      gateway_key_table_load_seconds: 12.5,
    });
  });

  test("the balancer ends TLS with the gateway's certificate and makes it again to the gateway", () => {
    const cfg = balancerConfig(8443, [9443], '/tmp/g/config/nginx/ssl/nginx.crt');
    expect(cfg).toContain('bind 127.0.0.1:8443 ssl crt /tmp/g/config/nginx/ssl/nginx.crt');
    expect(cfg).toContain('server gateway 127.0.0.1:9443 ssl verify none sni str(localhost)');
    expect(cfg).toContain('option forwardfor');
    expect(cfg).toContain('nbthread 1');
  });

  test('in front of several gateways, the balancer names each once', () => {
    const cfg = balancerConfig(8443, [9443, 9444, 9445], '/tmp/g/config/nginx/ssl/nginx.crt');
    const servers = cfg.split('\n').filter((l) => l.trim().startsWith('server '));
    expect(servers.map((l) => l.trim().split(' ').slice(1, 3))).toEqual([
      ['gateway', '127.0.0.1:9443'],
      ['gateway1', '127.0.0.1:9444'],
      ['gateway2', '127.0.0.1:9445'],
    ]);
  });
});
