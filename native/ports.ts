import { createServer } from 'node:net';

/**
 * Where freePort looks: below Linux's ephemeral range (32768–60999 by default). A port the
 * kernel picks for a listener on port 0 comes from that range, which is also where it picks
 * the local port of every outgoing connection, so a connection opened meanwhile (to
 * PostgreSQL, Redis, a provider) could hold the port by the time a server binds it. That is
 * how a test's nginx failed to start five times in a row in CI (2026-12-06).
 */
const LOW = 20_000;
const HIGH = 32_768;
const TRIES = 64;

/** A TCP port on loopback that nothing listens on right now, outside the ephemeral range. */
export async function freePort(): Promise<number> {
  for (let i = 0; i < TRIES; i += 1) {
    const port = LOW + Math.floor(Math.random() * (HIGH - LOW));
    if (await canListen(port)) return port;
  }
  // A machine with that whole range taken: let the kernel choose, as before.
  return await kernelPort();
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

function kernelPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => {
        if (address && typeof address === 'object') resolve(address.port);
        else reject(new Error('no free port'));
      });
    });
  });
}
