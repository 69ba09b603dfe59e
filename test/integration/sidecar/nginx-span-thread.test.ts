import { createSocket } from 'node:dgram';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, expect, test } from 'vitest';
import { freePort } from '../../../native/ports.js';
import type { Logger } from '../../../sidecar/log.js';
import { SPAN_THREAD_NICENESS } from '../../../sidecar/tracing/nginx-span-thread.js';
import { type RunningTracing, startTracing } from '../../../sidecar/tracing/start-tracing.js';

// The sidecar's receiver of nginx's span records runs on a thread of its own at the lowest
// priority (sidecar/tracing/nginx-span-worker.ts): its work must never preempt nginx.

const record = (path: string) =>
  `0af7651916cd43dd8448eb211c80319c b7ad6b7169203331  1764720000.250 0.012 GET 200 apk 7 ${path}`;
const frame = (text: string) => `${Buffer.byteLength(text)}:${text}`;

/** The niceness of each thread of this process (Linux: field 19 of /proc/self/task/<tid>/stat). */
function threadNiceness(): number[] {
  return readdirSync('/proc/self/task').map((tid) => {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    // The command may hold spaces: the fields after it start past its closing parenthesis.
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
  });
}

const lines: string[] = [];
const log: Logger = {
  debug: () => {},
  info: (message) => lines.push(`info ${message}`),
  warn: (message) => lines.push(`warn ${message}`),
  error: (message) => lines.push(`error ${message}`),
  child: () => log,
};

let running: RunningTracing | null = null;
afterEach(async () => {
  await running?.shutdown();
  running = null;
});

test('nginx span records are received on a thread at the lowest priority, and exported', async () => {
  const bodies: Buffer[] = [];
  const collector = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      bodies.push(Buffer.concat(chunks));
      res.writeHead(200, { 'Content-Type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((r) => collector.listen(0, '127.0.0.1', r));
  const endpoint = `http://127.0.0.1:${(collector.address() as AddressInfo).port}/v1/traces`;
  const port = await freePort();
  const before = threadNiceness().filter((n) => n === SPAN_THREAD_NICENESS).length;

  running = await startTracing(endpoint, log, { host: '127.0.0.1', port });

  expect(threadNiceness().filter((n) => n === SPAN_THREAD_NICENESS)).toHaveLength(before + 1);
  expect(lines).toContain('info tracing: receiving nginx span records');
  expect(lines).not.toContain('warn tracing: the span thread runs at the normal priority');
  const socket = createSocket('udp4');
  const datagram = Buffer.from(frame(record('/first')) + frame(record('/second')));
  await new Promise<void>((resolve, reject) =>
    socket.send(datagram, port, '127.0.0.1', (err) => (err ? reject(err) : resolve())),
  );
  socket.close();
  // Shutting down sends what the thread holds (its batches wait up to a second otherwise).
  await new Promise((r) => setTimeout(r, 200));
  await running.shutdown();
  running = null;
  collector.close();
  const sent = Buffer.concat(bodies);
  expect(sent.includes('/first')).toBe(true);
  expect(sent.includes('/second')).toBe(true);
});

test('a receiver that cannot listen fails the start, with the reason', async () => {
  const taken = createSocket('udp4');
  await new Promise<void>((r) => taken.bind(0, '127.0.0.1', () => r()));
  const { port } = taken.address();
  await expect(
    startTracing('http://127.0.0.1:9/v1/traces', log, { host: '127.0.0.1', port }),
  ).rejects.toThrow(/tracing: .*EADDRINUSE/);
  taken.close();
});
