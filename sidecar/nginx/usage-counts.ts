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
  // An nginx whose Lua code is older than the sidecar's (an upgrade under way) still answers
  // JSON, `{"<unix start s>|<row>": [allowed, limited]}`: read it rather than lose the counts
  // it has already deleted.
  if (text.startsWith('{')) return fromJson(text);
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

const count = (v: unknown): v is number =>
  typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

function fromJson(text: string): UsageCount[] {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return [];
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return [];
  const out: UsageCount[] = [];
  for (const [key, value] of Object.entries(body)) {
    const match = /^([1-9][0-9]{0,11})\|([1-9][0-9]{0,15})$/.exec(key);
    if (!match || !Array.isArray(value) || value.length !== 2) continue;
    const [allowed, limited] = value as unknown[];
    const row = Number(match[2]);
    if (!count(allowed) || !count(limited) || !Number.isSafeInteger(row)) continue;
    if (allowed + limited === 0) continue;
    out.push({ apiKeyId: row, at: Number(match[1]) * 1000, allowed, limited });
  }
  return out;
}
