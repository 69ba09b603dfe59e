import { describe, expect, test } from 'vitest';
import {
  applyLimits,
  excessGrowth,
  type OverState,
  type RowLimit,
  windowsToRead,
} from '../../../sidecar/ratelimit/over-admission.js';

// Window 100 of 10 s (Unix 1000 to 1010) of client 1, limited to 10 per 10 s; it ends at 1020
// (the window after it weighs it).
const KEY = 'l1 10 100';
const NOW = 1005;
const TEN: RowLimit = { requests: 10, perSeconds: 10, changedS: null };

/** One sync: the windows to read, read from `limits`, then the growth counted. */
function sync(
  states: Map<string, OverState>,
  totals: Record<string, number>,
  limits: Record<string, RowLimit> = { '1': TEN },
  nowS = NOW,
) {
  const map = new Map(Object.entries(totals));
  const toRead = windowsToRead(map, states);
  applyLimits(toRead, new Map(Object.entries(limits)), map, states);
  return { read: toRead.map((w) => w.key), growth: excessGrowth(map, states, nowS) };
}

describe('over-admission', () => {
  test('a limit never reached counts nothing, and its limit is read once', () => {
    const states = new Map<string, OverState>();
    expect(sync(states, { [KEY]: 4 })).toEqual({ read: [KEY], growth: 0 });
    expect(sync(states, { [KEY]: 10 })).toEqual({ read: [], growth: 0 });
    expect(sync(states, { [KEY]: 10 })).toEqual({ read: [], growth: 0 });
  });

  test('a total over the limit is counted once, then only its growth', () => {
    const states = new Map<string, OverState>();
    sync(states, { [KEY]: 8 });
    // 13 then 13: the excess is seen in two syncs, then counted.
    expect(sync(states, { [KEY]: 13 })).toEqual({ read: [KEY], growth: 0 });
    expect(sync(states, { [KEY]: 13 })).toEqual({ read: [], growth: 3 });
    expect(sync(states, { [KEY]: 13 }).growth).toBe(0);
    sync(states, { [KEY]: 15 });
    expect(sync(states, { [KEY]: 15 }).growth).toBe(2);
  });

  test('a count seen in one sync only (taken back by the next) is not counted', () => {
    const states = new Map<string, OverState>();
    sync(states, { [KEY]: 10 });
    expect(sync(states, { [KEY]: 11 }).growth).toBe(0);
    expect(sync(states, { [KEY]: 10 }).growth).toBe(0);
    expect(sync(states, { [KEY]: 10 }).growth).toBe(0);
  });

  test('a limit raised during the window is read again: what it admitted is not over', () => {
    const states = new Map<string, OverState>();
    sync(states, { [KEY]: 10 });
    const fifty = { '1': { requests: 50, perSeconds: 10, changedS: 1004 } };
    expect(sync(states, { [KEY]: 30 }, fifty)).toEqual({ read: [KEY], growth: 0 });
    expect(sync(states, { [KEY]: 30 }, fifty).growth).toBe(0);
  });

  test('a limit lowered during the window keeps the one admitted under', () => {
    const states = new Map<string, OverState>();
    sync(states, { [KEY]: 6 }, { '1': { requests: 50, perSeconds: 10, changedS: null } });
    const five = { '1': { requests: 5, perSeconds: 10, changedS: 1004 } };
    expect(sync(states, { [KEY]: 6 }, five).growth).toBe(0);
    expect(sync(states, { [KEY]: 6 }, five).growth).toBe(0);
  });

  test('a client changed in the window before its limit was first read: not counted', () => {
    const states = new Map<string, OverState>();
    const lowered = { '1': { requests: 5, perSeconds: 10, changedS: 1003 } };
    // Under the new limit when first read, over it later: the 6 may be the old limit's.
    sync(states, { [KEY]: 4 }, lowered);
    sync(states, { [KEY]: 6 }, lowered);
    expect(sync(states, { [KEY]: 6 }, lowered).growth).toBe(0);
    const fresh = new Map<string, OverState>();
    sync(fresh, { [KEY]: 6 }, lowered);
    expect(sync(fresh, { [KEY]: 6 }, lowered).growth).toBe(0);
  });

  test('first seen over the limit of a client unchanged since before the window: counted', () => {
    const states = new Map<string, OverState>();
    const before = { '1': { requests: 5, perSeconds: 10, changedS: 999 } };
    sync(states, { [KEY]: 7 }, before);
    expect(sync(states, { [KEY]: 7 }, before).growth).toBe(2);
  });

  test('a deleted client, one without a limit, or with another window length: not counted', () => {
    const deleted: Record<string, RowLimit> = {};
    for (const limits of [
      deleted,
      { '1': { requests: null, perSeconds: null, changedS: null } },
      { '1': { requests: 5, perSeconds: 60, changedS: null } },
    ]) {
      const states = new Map<string, OverState>();
      sync(states, { [KEY]: 20 }, limits);
      expect(sync(states, { [KEY]: 20 }, limits).growth).toBe(0);
    }
  });

  test('windows are counted apart, each once, and forgotten once they have ended', () => {
    const states = new Map<string, OverState>();
    const other = 'l2 10 101';
    const limits = { '1': TEN, '2': { requests: 3, perSeconds: 10, changedS: null } };
    sync(states, { [KEY]: 12, [other]: 4 }, limits);
    expect(sync(states, { [KEY]: 12, [other]: 4 }, limits).growth).toBe(3);
    // Missed by a sync (Redis restarted empty), then pushed again: not counted twice.
    expect(sync(states, { [other]: 4 }, limits).growth).toBe(0);
    sync(states, { [KEY]: 12, [other]: 4 }, limits);
    expect(sync(states, { [KEY]: 12, [other]: 4 }, limits).growth).toBe(0);
    sync(states, { [other]: 4 }, limits, 1020);
    expect([...states.keys()]).toEqual([other]);
  });

  test('a window whose limit could not be read waits, and is counted once it is', () => {
    const states = new Map<string, OverState>();
    sync(states, { [KEY]: 10 });
    const totals = new Map([[KEY, 14]]);
    const pending = new Set(windowsToRead(totals, states).map((w) => w.key));
    expect(excessGrowth(totals, states, NOW, pending)).toBe(0);
    sync(states, { [KEY]: 14 });
    expect(sync(states, { [KEY]: 14 }).growth).toBe(4);
  });
});
