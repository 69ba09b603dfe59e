import { writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { join } from 'node:path';
import { freePort } from '../../native/ports.js';
import { ensureCommand } from '../wrk/install.js';
import type { BenchGateway } from './gateway.js';
import { spawnServer } from './nginx-process.js';

/**
 * HAProxy (Debian 12's 2.6, run natively) in front of one gateway or several, as docker/balancer/haproxy.cfg
 * puts it in front of the replicas' pairs: HTTP mode, TLS ended at the balancer with the
 * gateway's own certificate and made again to the gateway, `option forwardfor`. One thread:
 * on two cores a second would only take CPU from the nginx being measured. No health check
 * (servers always there) and no log per request.
 */
export interface Balancer {
  url: string;
  pid: number | undefined;
  stop(): Promise<void>;
}

/** Pure: the configuration for a balancer on `port` in front of `backendPorts` on loopback. */
export function balancerConfig(port: number, backendPorts: number[], certFile: string): string {
  return [
    'global',
    '    maxconn 4000',
    '    nbthread 1',
    // The gateway's nginx.crt has its key beside it as nginx.key (the /etc/config layout).
    '    ssl-load-extra-del-ext',
    '    ssl-load-extra-files key',
    '    ssl-default-bind-options ssl-min-ver TLSv1.2',
    '    ssl-default-server-options ssl-min-ver TLSv1.2',
    'defaults',
    '    mode http',
    '    timeout connect 2s',
    '    timeout client 75s',
    '    timeout server 75s',
    '    timeout http-request 10s',
    '    timeout http-keep-alive 75s',
    'frontend https',
    `    bind 127.0.0.1:${port} ssl crt ${certFile} alpn http/1.1`,
    '    option forwardfor',
    '    default_backend gateway',
    'backend gateway',
    // Round robin (HAProxy's default) over several, as docker/balancer/haproxy.cfg over pairs.
    ...backendPorts.map(
      (p, i) =>
        `    server gateway${i || ''} 127.0.0.1:${p} ssl verify none sni str(localhost) maxconn 1000`,
    ),
    '',
  ].join('\n');
}

/**
 * Starts HAProxy (installed with apt-get when missing, as wrk is) in front of `gateways`,
 * with the first one's certificate.
 */
export async function startBalancer(
  dir: string,
  gateways: BenchGateway[],
  say: (line: string) => void,
): Promise<Balancer> {
  const haproxy = await ensureCommand('haproxy', 'haproxy', say);
  const port = await freePort();
  const cfg = join(dir, 'haproxy.cfg');
  await writeFile(
    cfg,
    balancerConfig(
      port,
      gateways.map((g) => g.port),
      join(gateways[0]!.configDir, 'nginx/ssl/nginx.crt'),
    ),
  );
  // Its own session, like the bench's other servers; SIGUSR1: a soft stop (connections finish).
  const child = spawnServer(haproxy, ['-db', '-f', cfg], 'SIGUSR1');
  const deadline = Date.now() + 10_000;
  while (!(await listening(port))) {
    if (!child.running() || Date.now() > deadline) {
      await child.stop();
      throw new Error(`haproxy did not listen on ${port}: ${child.stderr()}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { url: `https://127.0.0.1:${port}`, pid: child.pid, stop: child.stop };
}

function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
