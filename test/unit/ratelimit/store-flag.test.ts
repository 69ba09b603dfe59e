import { describe, expect, test } from 'vitest';
import { RATE_LIMIT_STORE } from '../../../common/contract.js';
import { closedRetryAfterSeconds } from '../../../sidecar/ratelimit/store-flag.js';

describe('a closed store’s Retry-After', () => {
  test('is one sync interval in whole seconds, at least one, at most the contract’s', () => {
    expect(closedRetryAfterSeconds(100)).toBe(1);
    expect(closedRetryAfterSeconds(1000)).toBe(1);
    expect(closedRetryAfterSeconds(1500)).toBe(2);
    expect(closedRetryAfterSeconds(60_000)).toBe(60);
    expect(closedRetryAfterSeconds(10_000_000)).toBe(RATE_LIMIT_STORE.maxRetryAfterSeconds);
  });
});
