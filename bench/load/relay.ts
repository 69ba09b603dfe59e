import { createConnection, createServer } from 'node:net';

/**
 * One hop of the idle chain (bench/phases/idle-chain.ts), as its own process:
 * `node relay.js <listen socket> [<next socket>]`. It passes every byte on to the next hop and
 * every byte back, or echoes when it is the last. No parsing, no work: what a round trip
 * through it costs is the machine's, not the gateway's. Says "up" on its IPC channel once
 * listening.
 */
const [listenPath, nextPath] = process.argv.slice(2);
if (!listenPath) throw new Error('usage: relay.js <listen socket> [<next socket>]');

const server = createServer((client) => {
  client.setNoDelay(true);
  if (!nextPath) {
    client.on('data', (chunk) => client.write(chunk));
    return;
  }
  const next = createConnection(nextPath);
  client.on('data', (chunk) => next.write(chunk));
  next.on('data', (chunk) => client.write(chunk));
  const end = () => {
    client.destroy();
    next.destroy();
  };
  client.on('close', end);
  next.on('close', end);
  client.on('error', end);
  next.on('error', end);
});
server.listen(listenPath, () => process.send?.('up'));
// Ends with the bench: the IPC channel closes when its parent goes, however that happens.
process.on('disconnect', () => process.exit(0));
