import { type ChildProcess, fork } from 'node:child_process';
import { createConnection, type Socket } from 'node:net';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { percentile } from '../stats.js';

const RELAY = fileURLToPath(new URL('../load/relay.js', import.meta.url));
/** About an HTTP request's size: what is timed is wake-ups, not copying. */
const MESSAGE = Buffer.alloc(200, 'x');

export interface ChainTimes {
  /** Relay processes after the client; 2 × relays wake-ups per round trip. */
  relays: number;
  p50: number;
  p99: number;
  max: number;
}

export interface IdleChainResult {
  roundTrips: number;
  /** A first sight's shape (client, nginx, sidecar, PostgreSQL, upstream: 8 wake-ups). */
  firstSight: ChainTimes;
  /** A seen key's (client, nginx, upstream: 4 wake-ups). */
  seen: ChainTimes;
}

/**
 * What one round trip through a chain of processes costs on this machine when each hop does
 * nothing: the scheduling under the never-seen row, measured beside it. A first sight wakes
 * eight processes in turn
 * (client → nginx → sidecar → PostgreSQL → sidecar → nginx → upstream → nginx → client); on
 * the 2-core VM of 2026-11-27 a chain of four idle Node relays, the same eight wake-ups, had
 * a p99 of 3.9-4.7 ms, over the row's 3 ms target with no work done at all. The relays are
 * Node processes on unix sockets, one message at a time, like the row's own client.
 */
export async function measureIdleChain(dir: string, roundTrips: number): Promise<IdleChainResult> {
  return {
    roundTrips,
    firstSight: await measureChain(dir, 4, roundTrips),
    seen: await measureChain(dir, 2, roundTrips),
  };
}

async function measureChain(dir: string, relays: number, roundTrips: number): Promise<ChainTimes> {
  const chain = await openChain(dir, relays);
  try {
    const times: number[] = [];
    for (let n = 0; n < roundTrips; n += 1) times.push(await chain.roundTrip());
    return {
      relays,
      p50: percentile(times, 50),
      p99: percentile(times, 99),
      max: percentile(times, 100),
    };
  } finally {
    chain.close();
  }
}

/** A chain of idle relays, open: one timed round trip at a time (ms), then closed. */
export interface IdleChain {
  roundTrip(): Promise<number>;
  close(): void;
}

/**
 * Starts `relays` relay processes and connects to the first. Used whole by measureIdleChain, and
 * one round trip at a time beside another row's requests (the bearer row interleaves them, so
 * both are measured under the same conditions).
 */
export async function openChain(dir: string, relays: number): Promise<IdleChain> {
  const path = (i: number) => join(dir, `relay-${relays}-${i}.sock`);
  const children: ChildProcess[] = [];
  let socket: Socket | undefined;
  const close = () => {
    socket?.destroy();
    for (const child of children) child.kill('SIGKILL');
  };
  try {
    // The last hop first: each relay connects onward only when a client connects to it.
    for (let i = relays; i >= 1; i -= 1) {
      const child = fork(RELAY, i === relays ? [path(i)] : [path(i), path(i + 1)], {
        stdio: 'ignore',
        execArgv: [],
      });
      children.push(child);
      await new Promise<void>((resolve, reject) => {
        child.once('message', () => resolve());
        child.once('exit', (code) => reject(new Error(`relay ${i} exited (${code})`)));
      });
    }
    const sock = createConnection(path(1));
    socket = sock;
    sock.setNoDelay(true);
    await new Promise<void>((resolve, reject) => {
      sock.once('connect', resolve);
      sock.once('error', reject);
    });
    let received = 0;
    let answered: (() => void) | null = null;
    sock.on('data', (chunk: Buffer) => {
      received += chunk.length;
      if (received >= MESSAGE.length && answered) {
        received -= MESSAGE.length;
        const done = answered;
        answered = null;
        done();
      }
    });
    const roundTrip = async () => {
      const sentAt = performance.now();
      await new Promise<void>((resolve) => {
        answered = resolve;
        sock.write(MESSAGE);
      });
      return performance.now() - sentAt;
    };
    return { roundTrip, close };
  } catch (err) {
    close();
    throw err;
  }
}
