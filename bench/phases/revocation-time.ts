/** The probe's answer while the key is accepted (nginx answers its reserved path itself). */
export const ACCEPTED = 404;
/**
 * A revoked key's answers: 401, and 429 once the refusals spent its key id's failure budget
 * (20 a minute). Pollers on pair B can see more than 20 before the bench has read DELETE's
 * answer (B learns through LISTEN/NOTIFY, the bench's event loop runs four pollers back to
 * back): counting only 401 as refused, those polls then never met CONFIRM and gave up after
 * GIVE_UP_MS (2026-11-26: "B worst 5008.9 ms", 20 × 429).
 */
export const REFUSED: ReadonlySet<number> = new Set([401, 429]);

export interface Poll {
  /** performance.now() when the request was handed to the socket. */
  sentAt: number;
  status: number;
}

/**
 * How long after t0 (DELETE's answer received) one pair went on accepting the key, from all
 * its pollers' requests together: the first refused request sent after the pair's last accepted
 * one, minus t0 (0 when the pair refused the key already before t0), and how many requests sent
 * at t0 or later it accepted.
 *
 * Together, not poller by poller: a 429 is answered after a one-second pause (the tarpit,
 * lua/gateway/refusal.lua), so a poller whose request sent just before t0 got one next asks a
 * second later. On its own its first request after t0 was then at +1 s, and "refused from
 * +999 ms" was the tarpit, not the revocation (2026-11-27, pair B, once in 100 deletes). Every
 * worker of one nginx reads the same revocation markers in shared memory, so the pair's other
 * requests in that second say when it refused.
 */
export function pairRevocation(
  polls: readonly Poll[],
  t0: number,
  now: number,
): { ms: number; accepted: number } {
  let lastAccepted = Number.NEGATIVE_INFINITY;
  let accepted = 0;
  for (const poll of polls) {
    if (poll.status !== ACCEPTED) continue;
    lastAccepted = Math.max(lastAccepted, poll.sentAt);
    if (poll.sentAt >= t0) accepted += 1;
  }
  let refusedFrom = now;
  for (const poll of polls) {
    if (REFUSED.has(poll.status) && poll.sentAt > lastAccepted) {
      refusedFrom = Math.min(refusedFrom, poll.sentAt);
    }
  }
  return { ms: Math.max(0, refusedFrom - t0), accepted };
}
