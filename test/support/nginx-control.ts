import { gatewayHome } from '../../native/home.js';
import {
  type KeyTableState,
  NginxKeyTable,
  readControlSocket,
  readLuaCounters,
} from '../../sidecar/nginx/index.js';

// The sidecar's own client of nginx's control socket (sidecar/nginx/), pointed at a test's
// nginx: what the tests send and read there is what the sidecar does.

/**
 * Whose control socket: a native gateway's home (test/support/native-stack.ts) or an nginx
 * started with its socket named (test/integration/generator/support/gateway-harness.ts).
 */
export type ControlSocketOf = { controlSocket: string } | { home: string };

const socketOf = (of: ControlSocketOf) =>
  'controlSocket' in of ? of.controlSocket : gatewayHome(of.home).controlSocket;

const TIMEOUT_MS = 10_000;
const MAX_BODY = 1024 * 1024;

/**
 * One request to nginx's control socket, as the sidecar sends one: its status and text. A
 * `body` goes as the sidecar's own (text, with its length); throws when nginx does not answer.
 */
export async function controlRequest(
  of: ControlSocketOf,
  path: string,
  method: 'GET' | 'POST' = 'GET',
  body?: string,
): Promise<{ status: number; text: string }> {
  const answer = await readControlSocket(socketOf(of), path, method, TIMEOUT_MS, MAX_BODY, body);
  if (!answer) throw new Error(`nginx's control socket did not answer ${method} ${path}`);
  return answer;
}

/** A POST to nginx's control socket, as the sidecar sends one (`/invalidate` with row ids...). */
export async function controlPost(of: ControlSocketOf, path: string, body = ''): Promise<number> {
  return (await controlRequest(of, path, 'POST', body)).status;
}

/** The Lua side's counters in nginx's shared dict (the control socket's /metrics). */
export async function luaCounters(of: ControlSocketOf): Promise<Record<string, number>> {
  const counters = await readLuaCounters(socketOf(of), TIMEOUT_MS);
  if (!counters) throw new Error("nginx's control /metrics did not answer with its counters");
  return counters;
}

/** The hits the nginx module passed so far (module_hit: its own count of its "yes"). */
export async function moduleHits(of: ControlSocketOf): Promise<number> {
  return (await luaCounters(of)).module_hit ?? 0;
}

/** What nginx says of its key table's replica (GET /key-table), as the sidecar reads it. */
export async function keyTableState(of: ControlSocketOf): Promise<KeyTableState> {
  const answer = await new NginxKeyTable(socketOf(of)).state();
  if (answer.kind !== 'state') throw new Error(`nginx's key table answered ${answer.kind}`);
  return answer.state;
}
