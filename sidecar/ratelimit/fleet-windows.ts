/**
 * Pure: one sync of this pair's rate limit windows with the fleet's
 * (docs/decisions/20261202-global-rate-limits.md). nginx holds, per window, this pair's count
 * plus what the sidecar added for the other pairs (`injected`); Redis holds the fleet's total,
 * to which each pair adds what it counted since its last push (`pushed`).
 */
import { RATE_LIMIT_WINDOWS } from '../../common/contract.js';

/** What this sidecar knows about one window it synced. */
export interface WindowState {
  /** The other pairs' count added to nginx's window. */
  injected: number;
  /** This pair's count already added to Redis. */
  pushed: number;
}

/** A window's key in nginx's limits dict, `l<row> <per> <index>`, read. */
export interface WindowKey {
  key: string;
  row: string;
  per: number;
  index: number;
}

const KEY = new RegExp(
  `^${RATE_LIMIT_WINDOWS.prefix}([1-9][0-9]{0,15}) ([1-9][0-9]{0,4}) ([0-9]{1,12})$`,
);

export function parseWindowKey(key: string): WindowKey | null {
  const m = KEY.exec(key);
  if (!m) return null;
  return { key, row: m[1]!, per: Number(m[2]), index: Number(m[3]) };
}

/** nginx's answer (lines `<key> <count>`) as counts by key; malformed lines left out. */
export function parseHeld(text: string): Map<string, number> {
  const held = new Map<string, number>();
  for (const line of text.split('\n')) {
    const space = line.lastIndexOf(' ');
    if (space < 0) continue;
    const key = line.slice(0, space);
    const n = Number(line.slice(space + 1));
    if (parseWindowKey(key) && Number.isSafeInteger(n)) held.set(key, n);
  }
  return held;
}

/** Whether a window still counts at `nowS`: this one or the one before it. */
export function isLive(w: WindowKey, nowS: number): boolean {
  return w.index >= Math.floor(nowS / w.per) - 1;
}

/** When a window stops mattering (the end of the window after it), Unix s. */
export function windowEnd(w: WindowKey): number {
  return (w.index + 2) * w.per;
}

/** Redis's key of a window's fleet total. */
export function redisKey(w: WindowKey): string {
  return `gw:rl:${w.row}:${w.per}:${w.index}`;
}

/** Redis's sorted set of the live windows (score: windowEnd in ms), so a pair learns of windows it holds none of. */
export const LIVE_SET = 'gw:rl:live';

/**
 * This pair's counts since its last push, by window: nginx's count less what was injected
 * (never below 0), less what was pushed. States of windows nginx no longer holds are dropped.
 */
export function deltas(
  held: Map<string, number>,
  states: Map<string, WindowState>,
  nowS: number,
): { window: WindowKey; local: number; delta: number }[] {
  for (const key of [...states.keys()]) if (!held.has(key)) states.delete(key);
  const out: { window: WindowKey; local: number; delta: number }[] = [];
  for (const [key, count] of held) {
    const window = parseWindowKey(key);
    if (!window || !isLive(window, nowS)) continue;
    const state = states.get(key) ?? { injected: 0, pushed: 0 };
    states.set(key, state);
    const local = Math.max(0, count - state.injected);
    out.push({ window, local, delta: local - state.pushed });
  }
  return out;
}

/**
 * The lines for nginx (`<key> <delta> <ttl s>`) that make each live window hold the fleet's
 * total: the other pairs' count is the total less this pair's pushed count. A total below this
 * pair's own (Redis lost its keys) adds nothing and takes back what was added.
 */
export function injections(
  totals: Map<string, number>,
  states: Map<string, WindowState>,
  nowS: number,
): string[] {
  const lines: string[] = [];
  for (const [key, total] of totals) {
    const window = parseWindowKey(key);
    if (!window || !isLive(window, nowS)) continue;
    const state = states.get(key) ?? { injected: 0, pushed: 0 };
    states.set(key, state);
    // Redis lost the window (restarted empty): this pair's count goes again at the next sync.
    if (total < state.pushed) state.pushed = 0;
    const others = Math.max(0, total - state.pushed);
    const delta = others - state.injected;
    if (delta === 0) continue;
    const ttl = Math.max(1, Math.ceil(windowEnd(window) - nowS));
    lines.push(`${key} ${delta} ${ttl}`);
    state.injected = others;
  }
  return lines;
}
