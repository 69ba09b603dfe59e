import { describe, expect, test } from 'vitest';
import { pairRevocation } from '../../bench/phases/revocation-time.js';

const T0 = 1000;
const NOW = 9000;
const poll = (sentAt: number, status: number) => ({ sentAt, status });

describe("a pair's revocation time, from all its pollers' requests", () => {
  test('the first refusal after the last acceptance, minus the moment DELETE answered', () => {
    const polls = [
      poll(990, 404),
      poll(999, 404),
      poll(1001, 404),
      poll(1002, 404),
      poll(1004, 401),
      poll(1005, 401),
      poll(1003, 404),
      poll(1006, 401),
    ];
    expect(pairRevocation(polls, T0, NOW)).toEqual({ ms: 4, accepted: 3 });
  });

  test('a poller held a second by the 429 tarpit does not stretch the figure', () => {
    // Poller 1 asked just before DELETE answered, got a 429 a second later, then asked again;
    // poller 2 was accepted once more after t0 and refused from +3 ms.
    const polls = [
      poll(995, 404),
      poll(999, 429),
      poll(1999, 429),
      poll(2000, 429),
      poll(998, 404),
      poll(1001, 404),
      poll(1003, 401),
      poll(1004, 429),
    ];
    expect(pairRevocation(polls, T0, NOW)).toEqual({ ms: 3, accepted: 1 });
  });

  test('refused already before DELETE answered: 0, with nothing accepted after', () => {
    const polls = [poll(990, 404), poll(996, 401), poll(1200, 429), poll(1300, 401)];
    expect(pairRevocation(polls, T0, NOW)).toEqual({ ms: 0, accepted: 0 });
  });

  test('still accepted at the end: the time until the bench gave up', () => {
    const polls = [poll(990, 404), poll(1500, 401), poll(2000, 404)];
    expect(pairRevocation(polls, T0, NOW)).toEqual({ ms: NOW - T0, accepted: 1 });
  });

  test('answers that are neither (errors, other statuses) say nothing', () => {
    const polls = [poll(990, 404), poll(1001, 0), poll(1002, 503), poll(1010, 401)];
    expect(pairRevocation(polls, T0, NOW)).toEqual({ ms: 10, accepted: 0 });
  });
});
