import { once } from 'node:events';
import { chmod, rm } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Where a service listens: a TCP host and port, or a unix socket path (native mode). */
export type ListenAddress = { host: string; port: number } | { socket: string };

/** The mode a unix socket is born with: owner-only (rw for the owner, nothing for others). */
export const SOCKET_MODE = 0o600;

/**
 * Starts listening. A unix socket left behind by a process that died is removed first; the
 * socket is owner-only, so nothing but its owner reaches around nginx.
 *
 * The socket is born owner-only (the umask is narrowed around the bind, which Node does inside
 * `listen()`) rather than chmod-ed once it listens: the native runner opens the socket to
 * nginx's workers (group, 0660) as soon as it answers, and a chmod of ours landing after that
 * shut the workers out for the process's whole life (every /auth a 502, callers a 503).
 */
export async function listen(server: Server, address: ListenAddress): Promise<string> {
  if ('socket' in address) {
    await rm(address.socket, { force: true });
    const previousUmask = narrowUmask(0o777 & ~SOCKET_MODE);
    try {
      server.listen(address.socket);
    } finally {
      if (previousUmask !== null) process.umask(previousUmask);
    }
    await once(server, 'listening');
    // Where the umask cannot be set (a worker thread), the mode is set once it listens.
    if (previousUmask === null) await chmod(address.socket, SOCKET_MODE);
    return `unix:${address.socket}`;
  }
  server.listen(address.port, address.host);
  await once(server, 'listening');
  const bound = server.address() as AddressInfo;
  const host = bound.address.includes(':') ? `[${bound.address}]` : bound.address;
  return `http://${host}:${bound.port}`;
}

/** Sets the umask to `mask`; returns the previous one, or null where it cannot be set. */
function narrowUmask(mask: number): number | null {
  try {
    return process.umask(mask);
  } catch {
    return null;
  }
}
