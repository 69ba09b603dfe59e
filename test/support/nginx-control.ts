import { join } from 'node:path';
import { CONTROL } from '../../common/contract.js';
import { http } from './http.js';

/** nginx's control socket in a native gateway's home (unix socket, never the public port). */
const socketOf = (home: string) => join(home, 'run/nginx-control.sock');

/** A POST to nginx's control socket, as the sidecar sends one (`/invalidate` with row ids...). */
export async function controlPost(home: string, path: string, body = ''): Promise<number> {
  const res = await http(`http://nginx${path}`, {
    method: 'POST',
    body,
    socketPath: socketOf(home),
  });
  return res.status;
}

/** The Lua side's counters in nginx's shared dict (the control socket's /metrics). */
export async function luaCounters(home: string): Promise<Record<string, number>> {
  const res = await http(`http://nginx${CONTROL.metrics}`, { socketPath: socketOf(home) });
  if (res.status !== 200) throw new Error(`nginx's control /metrics answered ${res.status}`);
  return res.json as Record<string, number>;
}

/** The hits the nginx module passed so far (module_hit: its own count of its "yes"). */
export async function moduleHits(home: string): Promise<number> {
  return (await luaCounters(home)).module_hit ?? 0;
}
