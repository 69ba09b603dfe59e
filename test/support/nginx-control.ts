import { gatewayHome } from '../../native/home.js';
import { readControlSocket, readLuaCounters } from '../../sidecar/nginx/index.js';

// The sidecar's own client of nginx's control socket (sidecar/nginx/), pointed at the socket of
// a native gateway's home: what the tests send and read there is what the sidecar does.

const socketOf = (home: string) => gatewayHome(home).controlSocket;

/** A POST to nginx's control socket, as the sidecar sends one (`/invalidate` with row ids...). */
export async function controlPost(home: string, path: string, body = ''): Promise<number> {
  const answer = await readControlSocket(socketOf(home), path, 'POST', 10_000, 1024 * 1024, body);
  if (!answer) throw new Error(`nginx's control socket did not answer POST ${path}`);
  return answer.status;
}

/** The Lua side's counters in nginx's shared dict (the control socket's /metrics). */
export async function luaCounters(home: string): Promise<Record<string, number>> {
  const counters = await readLuaCounters(socketOf(home), 10_000);
  if (!counters) throw new Error("nginx's control /metrics did not answer with its counters");
  return counters;
}

/** The hits the nginx module passed so far (module_hit: its own count of its "yes"). */
export async function moduleHits(home: string): Promise<number> {
  return (await luaCounters(home)).module_hit ?? 0;
}
