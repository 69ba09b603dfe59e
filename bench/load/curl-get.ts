import { spawn } from 'node:child_process';

export interface Streamed {
  status: number;
  bytes: number;
  ms: number;
  /** The last bytes of the body (where response_metadata is), when kept. */
  tail: string;
}

/**
 * A GET through curl, in its own process: TLS and reading a body of 170 MB would otherwise
 * run on the bench's event loop, the same loop that times the /auth probes, and show up as
 * their latency. The body is counted, and only its tail kept when `keepTail`.
 */
export function curlGet(
  url: string,
  caFile: string,
  headers: Record<string, string>,
  keepTail: boolean,
): Promise<Streamed> {
  const { port, pathname, search } = new URL(url);
  const args = [
    '-sS',
    '--cacert',
    caFile,
    '--resolve',
    `localhost:${port}:127.0.0.1`,
    '-w',
    '\n%{http_code} %{size_download} %{time_total}',
    '-o',
    keepTail ? '-' : '/dev/null',
    ...Object.entries(headers).flatMap(([k, v]) => ['-H', `${k}: ${v}`]),
    `https://localhost:${port}${pathname}${search}`,
  ];
  return new Promise((resolve, reject) => {
    const child = spawn('curl', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let tail = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => {
      tail = (tail + chunk.toString('latin1')).slice(-600);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      err += chunk.toString('utf8');
    });
    child.on('error', reject);
    child.on('close', (code) => {
      const m = /\n(\d{3}) (\d+) ([\d.]+)$/.exec(tail);
      if (code !== 0 || !m) {
        reject(new Error(`curl ${pathname}: exit ${code} ${err}`));
        return;
      }
      resolve({
        status: Number(m[1]),
        bytes: Number(m[2]),
        ms: Number(m[3]) * 1000,
        tail: tail.slice(0, m.index),
      });
    });
  });
}
