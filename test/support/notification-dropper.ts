import { connect, createServer, type Socket } from 'node:net';
import { BEAT_NOTICE_PREFIX } from '../../common/contract.js';

/**
 * A TCP proxy in front of a real PostgreSQL that forwards everything but the server's
 * NotificationResponse messages ('A') while `state.drop` is set: a connection that answers
 * queries but delivers no notices, as PgBouncer in transaction mode or a half-dead socket makes
 * one. With `state.beats` set it lets the heartbeats through and drops the other notices: a
 * pooler that hands the LISTEN's server connection to other clients now and then loses some
 * notices on a connection that stays up. The proxy is the test's (a named stand-in); the database
 * behind it is real.
 */
export interface NotificationDropper {
  /** `databaseUrl` with its host and port replaced by the proxy's. */
  url: string;
  state: { drop: boolean; beats: boolean; dropped: number };
  close(): void;
}

export async function notificationDropper(databaseUrl: string): Promise<NotificationDropper> {
  const target = new URL(databaseUrl);
  const state = { drop: false, beats: false, dropped: 0 };
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    sockets.add(client);
    sockets.add(upstream);
    client.pipe(upstream);
    let pending = Buffer.alloc(0);
    // Server to client: whole messages (a type byte and a length), notifications dropped.
    upstream.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      const out: Buffer[] = [];
      while (pending.length >= 5) {
        const length = pending.readUInt32BE(1);
        if (pending.length < 1 + length) break;
        const message = pending.subarray(0, 1 + length);
        pending = pending.subarray(1 + length);
        if (state.drop && message[0] === 0x41 && !(state.beats && isBeat(message))) {
          state.dropped += 1;
        } else out.push(message);
      }
      if (out.length > 0) client.write(Buffer.concat(out));
    });
    const close = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', close);
    upstream.on('error', close);
    client.on('close', close);
    upstream.on('close', close);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('no proxy address');
  const url = new URL(databaseUrl);
  url.hostname = '127.0.0.1';
  url.port = String(address.port);
  return {
    url: url.toString(),
    state,
    close() {
      for (const socket of sockets) socket.destroy();
      server.close();
    },
  };
}

/** A NotificationResponse (type, length, pid, channel, payload) whose payload is a heartbeat. */
function isBeat(message: Buffer): boolean {
  const channelEnd = message.indexOf(0, 9);
  return (
    channelEnd > 0 &&
    message.subarray(channelEnd + 1, channelEnd + 1 + BEAT_NOTICE_PREFIX.length).toString() ===
      BEAT_NOTICE_PREFIX
  );
}
