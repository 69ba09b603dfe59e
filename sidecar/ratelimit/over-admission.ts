/**
 * Pure: the requests the fleet admitted over a rate limit, from the fleet's window totals each
 * sync brings back (docs/decisions/20261202-global-rate-limits.md, item 10). nginx admits while
 * a window's sliding estimate is under the limit N, and the estimate is never below the
 * window's own count, so a window's fleet total above N is that many requests admitted over
 * it (pairs admitting on views up to two intervals old). What is counted is a lower bound:
 * admissions over the estimate that leave the window's own total under N are not seen.
 */
import { parseWindowKey, type WindowKey, windowEnd } from './fleet-windows.js';

/** A client's limit as PostgreSQL has it, and its last change since the windows read began. */
export interface RowLimit {
  /** null: the client has no limit now. */
  requests: number | null;
  perSeconds: number | null;
  /**
   * Unix s of the client's last change after its creation recorded in the feed (migration
   * 0011), null: none.
   */
  changedS: number | null;
}

/** What the sidecar knows about one window's excess. */
export interface OverState {
  /**
   * The largest limit the client had for this window's length at the reads made during it;
   * null: not known (not counted). The largest, because a limit lowered during the window
   * leaves what was admitted before under the old one.
   */
  limit: number | null;
  /** The total when the limit was last read: a total grown past the limit is read again. */
  readTotal: number;
  /** The total at the sync before (0 before the first). */
  last: number;
  /** Requests over the limit already counted. */
  counted: number;
}

/**
 * The windows whose limit must be read now: those never read, and those whose total grew past
 * the limit held since its last read (a raised limit must not count as an over-admission).
 */
export function windowsToRead(
  totals: Map<string, number>,
  states: Map<string, OverState>,
): WindowKey[] {
  const out: WindowKey[] = [];
  for (const [key, total] of totals) {
    const window = parseWindowKey(key);
    if (!window) continue;
    const state = states.get(key);
    const under = state?.limit != null && total <= state.limit;
    if (!state || (!under && total > state.readTotal)) out.push(window);
  }
  return out;
}

/**
 * Takes in the limits read for `windows` (by client row; a row absent was deleted). A window
 * whose client was changed after it began and before its limit was first read is not counted:
 * what it admitted before the change was under a limit no longer known (higher, perhaps). A
 * change after the first read keeps the larger of the two.
 */
export function applyLimits(
  windows: WindowKey[],
  read: Map<string, RowLimit>,
  totals: Map<string, number>,
  states: Map<string, OverState>,
): void {
  for (const window of windows) {
    const total = totals.get(window.key) ?? 0;
    const row = read.get(window.row);
    const fresh = row && row.perSeconds === window.per ? row.requests : null;
    const state = states.get(window.key) ?? { limit: null, readTotal: 0, last: 0, counted: 0 };
    states.set(window.key, state);
    state.readTotal = total;
    if (state.limit !== null) {
      if (fresh !== null) state.limit = Math.max(state.limit, fresh);
      continue;
    }
    const changedWithin = row?.changedS != null && row.changedS >= window.index * window.per;
    state.limit = changedWithin ? null : fresh;
  }
}

/**
 * The requests over their limits seen since the last call, each window's excess counted once:
 * only its growth. A window's total is taken as the smaller of its last two (nginx counts a
 * refused request for a few microseconds before taking it back; a sync that reads it then
 * pushes one too many, taken back at the next). Windows in `pending` (their limit could not be
 * read) wait. A window's state is dropped once it has ended at `nowS`, not when a sync's totals
 * miss it (Redis restarted empty, until the pairs push again): its excess is counted once.
 */
export function excessGrowth(
  totals: Map<string, number>,
  states: Map<string, OverState>,
  nowS: number,
  pending: ReadonlySet<string> = new Set(),
): number {
  for (const key of [...states.keys()]) {
    const window = parseWindowKey(key);
    if (!window || windowEnd(window) <= nowS) states.delete(key);
  }
  let growth = 0;
  for (const [key, total] of totals) {
    const state = states.get(key);
    if (!state || pending.has(key)) continue;
    const seen = Math.min(state.last, total);
    state.last = total;
    if (state.limit === null) continue;
    const excess = Math.max(0, seen - state.limit);
    if (excess > state.counted) {
      growth += excess - state.counted;
      state.counted = excess;
    }
  }
  return growth;
}
