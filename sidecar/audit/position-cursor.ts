/**
 * Opaque cursors for the audit listings, as clients/listing/cursor.ts makes them for API clients: base64url
 * of a small JSON naming a position (never an offset), so rows added meanwhile never shift a
 * page. `k` says which listing made it: one listing's cursor is refused by the other.
 */
export function encodePosition(kind: string, position: readonly number[]): string {
  return Buffer.from(JSON.stringify({ k: kind, p: position }), 'utf8').toString('base64url');
}

/** The position, or null when the text is not a cursor of `kind` with `length` integers. */
export function decodePosition(text: string, kind: string, length: number): number[] | null {
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(text)) return null;
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    return null;
  }
  const { k, p } = (value ?? {}) as { k?: unknown; p?: unknown };
  if (k !== kind || !Array.isArray(p) || p.length !== length) return null;
  return p.every((n) => Number.isSafeInteger(n) && n >= 0) ? (p as number[]) : null;
}
