/** Requests nginx counted for one client in one stretch of time (its control socket's /usage). */
export interface UsageCount {
  apiKeyId: number;
  /** Start of the stretch nginx counted in, Unix ms. */
  at: number;
  allowed: number;
  limited: number;
}

/** Where the counts are collected: this sidecar's nginx. */
export interface UsageSource {
  /** The counts nginx has finished since the last call; none when unreachable. Never throws. */
  drainUsage(): Promise<UsageCount[]>;
}

const ROW = /^[1-9][0-9]{0,15}$/;
const COUNT = /^(0|[1-9][0-9]{0,14})$/;
const SECTION = /^([ux]) ([1-9][0-9]{0,11})$/;

/**
 * Pure: nginx's report (lua/gateway/usage.lua's drain) as counts, summed per client and stretch:
 * sections, each a line `<kind> <unix start s>` (`u` allowed, `x` refused by a rate limit), then
 * lines `<row> <n>`. Anything malformed is left out (nginx wrote it, but a count that is no
 * count must not reach the table), and so are lines before any section.
 */
export function parseUsageCounts(text: string): UsageCount[] {
  const byKey = new Map<string, UsageCount>();
  let kind: 'u' | 'x' | null = null;
  let at = 0;
  for (const line of text.split('\n')) {
    const section = SECTION.exec(line);
    if (section) {
      kind = section[1] as 'u' | 'x';
      at = Number(section[2]) * 1000;
      continue;
    }
    const space = line.indexOf(' ');
    if (kind === null || space < 0) continue;
    const row = line.slice(0, space);
    const n = line.slice(space + 1);
    if (!ROW.test(row) || !COUNT.test(n)) continue;
    const apiKeyId = Number(row);
    const value = Number(n);
    if (!Number.isSafeInteger(apiKeyId) || value === 0) continue;
    const key = `${at}|${row}`;
    let entry = byKey.get(key);
    if (!entry) {
      entry = { apiKeyId, at, allowed: 0, limited: 0 };
      byKey.set(key, entry);
    }
    if (kind === 'u') entry.allowed += value;
    else entry.limited += value;
  }
  return [...byKey.values()];
}
