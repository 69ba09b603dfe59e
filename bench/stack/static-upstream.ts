import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import { inConfigDir, nginxArgs, writeMainConf } from '../../generator/index.js';
import { locateNginx } from '../../native/nginx.js';
import { spawnNginx } from './nginx-process.js';

/**
 * The fast upstream's answer to every request: a fixed 200 JSON about the size of the engine's
 * session answer, so the fast rows move the same bytes and differ only in what makes them.
 */
export const STATIC_BODY = JSON.stringify({
  type: 'OKResult',
  status: 'OK',
  result: {
    type: 'StaticAnswer',
    note: 'fixed answer of the bench static upstream, the same for every request',
  },
  job: null,
  action: null,
});

export interface StaticUpstream {
  /** `unix:<path>`, as an upstream `server` or a gateway's `upstreams.app` names it. */
  upstream: string;
  /** The nginx master (its worker is its child). */
  pid: number | undefined;
  stop(): Promise<void>;
}

/**
 * A static nginx responder in place of the application, so the application cannot hide the
 * gateway's cost: one worker answering `return 200` from memory on a unix socket (like the
 * engine's, so the gateway's upstream hop is the same kind). One worker, not `auto`: on two
 * cores its work (a few microseconds per answer) is a small share of one core, and a second
 * worker would only add a process that competes with the nginx being measured. No access log:
 * it is the app, not part of the gateway.
 */
export async function startStaticUpstream(dir: string): Promise<StaticUpstream> {
  const configDir = join(dir, 'config');
  const runtimeDir = join(dir, 'run');
  const socket = join(runtimeDir, 'static.sock');
  await mkdir(runtimeDir, { recursive: true });
  const conf = inConfigDir(configDir, 'nginx/conf.d/static.conf');
  await mkdir(join(conf, '..'), { recursive: true });
  await writeFile(
    conf,
    [
      '# The bench fast upstream: every request gets the same small 200, from memory.',
      // The main nginx.conf's log format names the request id default.conf chooses.
      'map "" $gateway_request_id { default $request_id; }',
      'server {',
      `    listen "unix:${socket}";`,
      '    access_log off;',
      '    default_type application/json;',
      // The engine (Node) never closes a keep-alive connection after N requests; nor does this.
      '    keepalive_requests 1000000;',
      `    location / { return 200 '${STATIC_BODY}'; }`,
      '}',
      '',
    ].join('\n'),
  );
  await writeMainConf({
    runtimeDir,
    configDir,
    errorLog: join(dir, 'nginx-error.log'),
    accessLog: 'off',
    workerProcesses: 1,
    ...(process.getuid?.() === 0 ? { user: 'root' } : {}),
  });
  const nginx = spawnNginx(locateNginx(process.env), nginxArgs(runtimeDir));
  const deadline = Date.now() + 15_000;
  for (;;) {
    const status = await get(socket).catch(() => 0);
    if (status === 200) break;
    if (!nginx.running() || Date.now() > deadline) {
      await nginx.stop();
      const log = await readFile(join(dir, 'nginx-error.log'), 'utf8').catch(() => '');
      throw new Error(`static upstream nginx did not answer on ${socket}\n${nginx.stderr()}${log}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { upstream: `unix:${socket}`, pid: nginx.pid, stop: nginx.stop };
}

function get(socketPath: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, path: '/', timeout: 1_000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end();
  });
}
