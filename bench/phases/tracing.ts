import { spawn } from 'node:child_process';
import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { LAYOUT, renderConfigFiles } from '../../generator/index.js';
import { freePort } from '../../native/ports.js';
import { type Baseline, startRendered } from '../stack/baseline.js';
import { settingsOfB } from '../stack/fast-stack.js';
import { type Aggregate, alternate } from './aggregate.js';
import { apkTarget, type PhaseContext } from './context.js';

export interface TracingResult {
  /** The seen key on B's configuration rendered with tracing on (sampling 1.0), and as it is. */
  on: Aggregate;
  off: Aggregate;
  /** Requests the tracing copy answered (its access log's lines), and the spans exported. */
  answered: number;
  spans: number;
  /** Datagrams the kernel dropped for a full receive buffer meanwhile (all of UDP; null: unread). */
  udpDropped: number | null;
}

/** The span name the sidecar gives nginx's records (sidecar/tracing/nginx-spans.ts). */
const SPAN_NAME = Buffer.from('gateway GET');

/**
 * Issue 52's row on B's configuration (static upstream): a seen API key with tracing on,
 * every request sampled, nginx batching its span records (the module's gateway_span_log), against
 * the same with tracing off. Both sides are copies of B's nginx (bench/stack/baseline.ts),
 * asking B's sidecar on a key's first sight: the off copy is B's default.conf as it is, the on
 * copy B's settings rendered again with `tracing` on. The records go to the sidecar's own
 * receiver and exporter (sidecar/tracing/start-tracing.ts), run in a process of its own as in
 * the sidecar (span-exporter-main.ts; its CPU is the "span exporter" share), exporting to a
 * sink in the bench's process that answers 200 and counts the spans; B's sidecar keeps
 * tracing off.
 */
export async function measureTracing(ctx: PhaseContext): Promise<TracingResult> {
  const { b, dir } = ctx.stack;
  const sink = await startSpanSink();
  const port = await freePort();
  const exporter = await startExporter(sink.url, port, ctx.say);
  const copies: Baseline[] = [];
  const dropsBefore = await udpReceiveDrops();
  let runs: [Aggregate, Aggregate];
  try {
    const render = async (more = {}) =>
      renderConfigFiles(await settingsOfB(ctx.stack, more)).find(
        (f) => f.path === LAYOUT.defaultConf,
      )!.content;
    const tracing = { enabled: true, sample_ratio: 1, otlp_endpoint: sink.url };
    const changed = await render({ tracing: { ...tracing, nginx_spans_to: `127.0.0.1:${port}` } });
    const rendered = { same: await render(), changed };
    const off = await startRendered(join(dir, 'trace-off'), b.configDir, 'tracing-off copy');
    copies.push(off);
    const on = await startRendered(join(dir, 'trace-on'), b.configDir, 'tracing copy', rendered);
    copies.push(on);
    ctx.extraRoots['nginx tracing off'] = off.pid;
    ctx.extraRoots['nginx tracing on'] = on.pid;
    ctx.extraRoots['span exporter'] = exporter.pid;
    ctx.say(`  B's copies: tracing off ${off.url}, on ${on.url} (spans to port ${port})`);
    const target = (name: string, copy: Baseline) => apkTarget(name, copy.url, ctx.stack.apiKey);
    runs = await alternate(ctx, [target('fast tracing on', on), target('fast tracing off', off)]);
  } finally {
    delete ctx.extraRoots['nginx tracing off'];
    delete ctx.extraRoots['nginx tracing on'];
    delete ctx.extraRoots['span exporter'];
    await Promise.all(copies.map((c) => c.stop()));
    // Stopped: every record is sent; the shutdown exports the last batch.
    await new Promise((r) => setTimeout(r, 500));
    await exporter.stop();
    await sink.close();
  }
  return {
    on: runs[0],
    off: runs[1],
    answered: await lineCount(join(dir, 'trace-on', 'nginx-access.log')),
    spans: sink.spans(),
    udpDropped: dropsBefore === null ? null : ((await udpReceiveDrops()) ?? 0) - dropsBefore,
  };
}

/** Linux's count of UDP datagrams dropped for a full receive buffer (/proc/net/snmp). */
async function udpReceiveDrops(): Promise<number | null> {
  const text = await readFile('/proc/net/snmp', 'utf8').catch(() => '');
  const [names, values] = text.split('\n').filter((l) => l.startsWith('Udp: '));
  const at = names?.split(' ').indexOf('RcvbufErrors') ?? -1;
  return at > 0 ? Number(values?.split(' ')[at]) : null;
}

/** A collector stand-in: 200 to every POST, spans counted by their name's bytes (no decoding). */
async function startSpanSink() {
  let spans = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      for (let at = body.indexOf(SPAN_NAME); at >= 0; at = body.indexOf(SPAN_NAME, at + 1))
        spans += 1;
      res.writeHead(200, { 'Content-Type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1/traces`,
    spans: () => spans,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** span-exporter-main.ts started: its pid, and stop (SIGTERM: it sends what it holds). */
async function startExporter(collector: string, port: number, say: (line: string) => void) {
  const main = new URL('./span-exporter-main.js', import.meta.url).pathname;
  const child = spawn(process.execPath, [main, collector, String(port)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stderr.on('data', (chunk: Buffer) => say(`  ${chunk.toString().trimEnd()}`));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    child.stdout.once('data', () => resolve());
    child.once('exit', (code) => reject(new Error(`the span exporter exited (${code})`)));
  });
  return {
    pid: child.pid!,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

async function lineCount(file: string): Promise<number> {
  let lines = 0;
  for await (const chunk of createReadStream(file) as AsyncIterable<Buffer>) {
    for (let at = chunk.indexOf(10); at >= 0; at = chunk.indexOf(10, at + 1)) lines += 1;
  }
  return lines;
}
