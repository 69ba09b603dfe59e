import { once } from 'node:events';
import { chmod, rm } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Where a service listens: a TCP host and port, or a unix socket path (native mode). */
export type ListenAddress = { host: string; port: number } | { socket: string };

/**
 * Starts listening. A unix socket left behind by a process that died is removed first; the
 * socket is made owner-only, so nothing but nginx (same user) can reach around it.
 */
export async function listen(server: Server, address: ListenAddress): Promise<string> {
  if ('socket' in address) {
    await rm(address.socket, { force: true });
    server.listen(address.socket);
    await once(server, 'listening');
    await chmod(address.socket, 0o600);
    return `unix:${address.socket}`;
  }
  server.listen(address.port, address.host);
  await once(server, 'listening');
  const bound = server.address() as AddressInfo;
  const host = bound.address.includes(':') ? `[${bound.address}]` : bound.address;
  return `http://${host}:${bound.port}`;
}
