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

const count = (v: unknown): v is number =>
  typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

/**
 * Pure: nginx's `{"<unix start s>|<row>": [allowed, limited]}` as counts; anything malformed is
 * left out (nginx wrote it, but a count that is no count must not reach the table).
 */
export function parseUsageCounts(body: unknown): UsageCount[] {
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
