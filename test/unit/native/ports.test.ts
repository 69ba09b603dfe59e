import { createServer, type Server } from 'node:net';
import { expect, test } from 'vitest';
import { freePort } from '../../../native/ports.js';

const listen = (port: number) =>
  new Promise<Server>((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });

test('a free port is below the ephemeral range, and a server can listen on it', async () => {
  for (let i = 0; i < 20; i += 1) {
    const port = await freePort();
    expect(port).toBeGreaterThanOrEqual(20_000);
    expect(port).toBeLessThan(32_768);
    const server = await listen(port);
    await new Promise((r) => server.close(r));
  }
});

test('a port something listens on is never given', async () => {
  const held: Server[] = [];
  const ports = new Set<number>();
  for (let i = 0; i < 20; i += 1) {
    const port = await freePort();
    ports.add(port);
    held.push(await listen(port));
  }
  // Each port was free when given, and all are held at once: twenty different ports.
  expect(ports.size).toBe(20);
  await Promise.all(held.map((s) => new Promise((r) => s.close(r))));
});
