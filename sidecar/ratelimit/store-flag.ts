import { CONTROL, RATE_LIMIT_STORE } from '../../common/contract.js';
import { readControlSocket } from '../nginx/control-socket.js';

/**
 * nginx's flag for rate_limits.redis.on_failure closed (RATE_LIMIT_STORE in common/contract/):
 * while it is set nginx passes no request of a rate-limited client (503
 * RATE_LIMIT_STORE_UNREACHABLE, Retry-After its value). The sidecar sets it from its start and
 * whenever a sync fails, clears it with the counts of a sync that worked, and clears it at start
 * with any other setting (a flag left by an earlier sidecar that ran `closed`).
 */

const MAX_BODY = 16 * 1024 * 1024;

/** The Retry-After of a refused request: one sync interval, whole seconds, at least one. */
export function closedRetryAfterSeconds(syncMs: number): number {
  return Math.min(RATE_LIMIT_STORE.maxRetryAfterSeconds, Math.max(1, Math.ceil(syncMs / 1000)));
}

/**
 * One POST of CONTROL.limits with `?list=0&closed=<seconds>` (0 clears) and `body` (the
 * fleet's counts, applied before the flag changes): whether nginx took both.
 */
export async function tellStoreFlag(
  socketPath: string,
  closedSeconds: number,
  body = '',
): Promise<boolean> {
  const wrote = await readControlSocket(
    socketPath,
    `${CONTROL.limits}?list=0&closed=${closedSeconds}`,
    'POST',
    2000,
    MAX_BODY,
    body,
  );
  return wrote?.status === 200;
}

/**
 * At start with a setting other than `closed`: the flag cleared, tried every `everyMs` until
 * nginx answers at all (an nginx that is not up yet holds no flag once it is; one that answers
 * otherwise than 200 knows none), at most `tries` times. Returns its stop.
 */
export function clearStoreFlagAtStart(socketPath: string, everyMs = 1000, tries = 60): () => void {
  let timer: NodeJS.Timeout | null = null;
  let stopped = false;
  const attempt = async (left: number) => {
    const answer = await readControlSocket(
      socketPath,
      `${CONTROL.limits}?list=0&closed=0`,
      'POST',
      2000,
      MAX_BODY,
      '',
    );
    if (answer !== null || left <= 1 || stopped) return;
    timer = setTimeout(() => void attempt(left - 1), everyMs);
    timer.unref();
  };
  void attempt(tries);
  return () => {
    stopped = true;
    if (timer) clearTimeout(timer);
  };
}
