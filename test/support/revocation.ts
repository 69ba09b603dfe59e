import { expect } from 'vitest';

/**
 * Revocation through nginx, where answers may be reused for one cache window: after DELETE (or a
 * PUT that takes admin away)
 * answered at `answeredAt`, requests keep coming for `boundMs` plus a margin. Every request
 * that starts once the bound has passed must be refused, and once refused a credential never
 * passes again. This is exact, not a timing guess: nginx keys cached answers by the window of
 * its own clock, so an answer cannot be found once its window is over.
 */
export async function expectRevokedWithinBound(
  send: () => Promise<number>,
  answeredAt: number,
  boundMs: number,
  /** The status of a refusal: 401 for a deleted key, 403 for a key no longer admin. */
  refused = 401,
): Promise<void> {
  // A deleted key presented again and again spends its id's failure budget: past it nginx
  // answers 429, which refuses it all the same (docs/decisions/20261125-miss-path.md).
  const refusals = refused === 401 ? [401, 429] : [refused];
  let seenRefused = false;
  const statuses: string[] = [];
  while (Date.now() < answeredAt + boundMs + 300) {
    const startedAt = Date.now();
    const status = await send();
    statuses.push(`${startedAt - answeredAt}ms:${status}`);
    if (startedAt >= answeredAt + boundMs || seenRefused) {
      expect(refusals, statuses.join(' ')).toContain(status);
    } else {
      expect([200, ...refusals], statuses.join(' ')).toContain(status);
    }
    seenRefused ||= refusals.includes(status);
    await new Promise((r) => setTimeout(r, 10));
  }
  expect(seenRefused).toBe(true);
}
