/** A refusal count nginx decided itself (no sidecar asked): reason, client row or null, count. */
export interface NginxFailureCount {
  reason: string;
  apiKeyId: number | null;
  count: number;
}

/** Where refusals decided by nginx itself are collected (its control socket's /failures). */
export interface NginxFailureSource {
  /** The counts since the last call; none when nginx cannot be reached. Never throws. */
  drainFailures(): Promise<NginxFailureCount[]>;
}

/** Pure: nginx's `{"<reason>|<row>": n}` as counts; anything malformed is left out. */
export function parseFailureCounts(body: unknown): NginxFailureCount[] {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return [];
  const out: NginxFailureCount[] = [];
  for (const [key, value] of Object.entries(body)) {
    const match = /^([A-Z_]{1,40})\|([1-9][0-9]{0,15})?$/.exec(key);
    if (!match || typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) continue;
    const row = match[2] === undefined ? null : Number(match[2]);
    if (row !== null && !Number.isSafeInteger(row)) continue;
    out.push({ reason: match[1]!, apiKeyId: row, count: value });
  }
  return out;
}
