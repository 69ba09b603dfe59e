import { CONTROL, LUA_COUNTERS } from '../../common/contract.js';
import { readControlSocket } from './control-socket.js';

/** The Lua side's counters (common/contract.ts's LUA_COUNTERS, `refused_<status>`) by key. */
export type LuaCounters = Record<string, number>;

const TIMEOUT_MS = 1_000;
const MAX_BODY = 64 * 1024;
/** nginx's own refusals, one counter per HTTP status. */
export const REFUSED_COUNTER = /^refused_(\d{3})$/;

/** The control socket's counters (`GET /metrics`), or null when nginx does not answer them. */
export async function readLuaCounters(
  socketPath: string,
  timeoutMs = TIMEOUT_MS,
): Promise<LuaCounters | null> {
  const answer = await readControlSocket(socketPath, CONTROL.metrics, 'GET', timeoutMs, MAX_BODY);
  return answer?.status === 200 ? parseCounters(answer.text) : null;
}

/** Only non-negative finite numbers under known or refusal keys count; anything else is dropped. */
export function parseCounters(text: string): LuaCounters | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const out: LuaCounters = {};
  for (const [key, n] of Object.entries(value)) {
    const known = key in LUA_COUNTERS || REFUSED_COUNTER.test(key);
    if (known && typeof n === 'number' && Number.isFinite(n) && n >= 0) out[key] = n;
  }
  return out;
}
