import { describe, expect, test } from 'vitest';
import {
  deltas,
  injections,
  parseHeld,
  parseWindowKey,
  redisKey,
  type WindowState,
} from '../../../sidecar/ratelimit/fleet-windows.js';
import { readRateLimitStoreSettings } from '../../../sidecar/ratelimit/store-settings.js';

// Window 100 of 10 s: Unix 1000 to 1010; at 1005 it and window 99 are live.
const NOW = 1005;

describe('a window key', () => {
  test('is read from nginx’s limits dict and named in Redis', () => {
    const w = parseWindowKey('l42 10 100');
    expect(w).toEqual({ key: 'l42 10 100', row: '42', per: 10, index: 100 });
    expect(redisKey(w!)).toBe('gw:rl:42:10:100');
  });
  test('anything else is not one', () => {
    for (const bad of ['u12 3', 'l0 10 1', 'l1 0 1', 'l1 10 -1', 'l1 10', 'x', 'l1  10 1']) {
      expect(parseWindowKey(bad)).toBeNull();
    }
  });
  test('nginx’s answer keeps only window lines with a count', () => {
    expect([...parseHeld('l1 10 100 5\nu3 4\nl2 10 100 x\n\nl3 10 99 0\n')]).toEqual([
      ['l1 10 100', 5],
      ['l3 10 99', 0],
    ]);
  });
});

describe('one sync', () => {
  test('pushes what this pair counted since, and makes nginx hold the others’ count', () => {
    const states = new Map<string, WindowState>();
    const first = deltas(new Map([['l1 10 100', 4]]), states, NOW);
    expect(first.map((d) => [d.local, d.delta])).toEqual([[4, 4]]);
    states.get('l1 10 100')!.pushed = 4;
    // Redis: the fleet's total is 10, so the other pairs counted 6.
    expect(injections(new Map([['l1 10 100', 10]]), states, NOW)).toEqual(['l1 10 100 6 15']);
    // nginx now holds 4 + 6 + 2 admitted since: only the 2 are pushed.
    const second = deltas(new Map([['l1 10 100', 12]]), states, NOW);
    expect(second.map((d) => [d.local, d.delta])).toEqual([[6, 2]]);
  });

  test('a window this pair holds none of still gets the fleet’s count', () => {
    const states = new Map<string, WindowState>();
    expect(injections(new Map([['l7 10 100', 3]]), states, NOW)).toEqual(['l7 10 100 3 15']);
  });

  test('windows past the one before are left alone, and forgotten once nginx drops them', () => {
    const states = new Map<string, WindowState>([['l1 10 98', { injected: 1, pushed: 1 }]]);
    expect(deltas(new Map([['l1 10 98', 9]]), states, NOW)).toEqual([]);
    expect(injections(new Map([['l1 10 98', 9]]), states, NOW)).toEqual([]);
    deltas(new Map(), states, NOW);
    expect(states.size).toBe(0);
  });

  test('Redis restarted empty: nothing added, what was added taken back, the count pushed again', () => {
    const states = new Map<string, WindowState>([['l1 10 100', { injected: 5, pushed: 4 }]]);
    expect(injections(new Map([['l1 10 100', 0]]), states, NOW)).toEqual(['l1 10 100 -5 15']);
    const again = deltas(new Map([['l1 10 100', 4]]), states, NOW);
    expect(again.map((d) => [d.local, d.delta])).toEqual([[4, 4]]);
  });
});

describe('the store’s settings', () => {
  test('default to local', () => {
    expect(readRateLimitStoreSettings({})).toEqual({
      store: 'local',
      redisUrl: '',
      syncMs: 1000,
      onFailure: 'local',
    });
  });
  test('redis needs a redis URL; every problem is said at once', () => {
    expect(() =>
      readRateLimitStoreSettings({
        RATE_LIMITS_STORE: 'redis',
        RATE_LIMITS_REDIS_URL: 'http://x',
        RATE_LIMITS_SYNC_MS: '5',
      }),
    ).toThrow(/RATE_LIMITS_REDIS_URL.*RATE_LIMITS_SYNC_MS/);
    expect(() => readRateLimitStoreSettings({ RATE_LIMITS_STORE: 'memcached' })).toThrow(
      /RATE_LIMITS_STORE/,
    );
    expect(() => readRateLimitStoreSettings({ RATE_LIMITS_ON_FAILURE: 'open' })).toThrow(
      /RATE_LIMITS_ON_FAILURE must be local or closed, got "open"/,
    );
  });
  test('on_failure closed is taken', () => {
    expect(
      readRateLimitStoreSettings({
        RATE_LIMITS_STORE: 'redis',
        RATE_LIMITS_REDIS_URL: 'redis://r:6379',
        RATE_LIMITS_ON_FAILURE: 'closed',
      }).onFailure,
    ).toBe('closed');
  });
});
