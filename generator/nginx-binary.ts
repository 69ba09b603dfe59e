import { execFile } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { nginxArgs, writeMainConf } from './main-conf.js';

/** The nginx executable on `PATH`, or null when there is none. */
export function findNginx(path: string | undefined = process.env.PATH): string | null {
  for (const dir of (path ?? '').split(delimiter)) {
    if (dir === '') continue;
    const candidate = join(dir, 'nginx');
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here; keep looking
    }
  }
  return null;
}

export interface NginxTestResult {
  ok: boolean;
  /** nginx's own words (it reports on stderr). */
  output: string;
}

/**
 * Runs `nginx -t` on the configuration directory `configDir` with the gateway's main
 * nginx.conf, in a throw-away runtime directory so it works for any user.
 */
export async function testNginxConfig(nginx: string, configDir: string): Promise<NginxTestResult> {
  const runtimeDir = await mkdtemp(join(tmpdir(), 'gateway-nginx-t-'));
  try {
    await writeMainConf({
      runtimeDir,
      configDir,
      errorLog: 'stderr',
      accessLog: 'off',
      workerProcesses: 1,
    });
    return await new Promise((resolve) => {
      execFile(
        nginx,
        ['-t', ...nginxArgs(runtimeDir)],
        { timeout: 30_000 },
        (err, stdout, stderr) => resolve({ ok: err === null, output: `${stdout}${stderr}`.trim() }),
      );
    });
  } finally {
    await rm(runtimeDir, { recursive: true, force: true });
  }
}

/**
 * True when this nginx can run the gateway's Lua code: Debian's dynamic module is installed,
 * or the binary has it built in (OpenResty: `nginx -V` names lua-nginx-module).
 */
export async function nginxHasLua(nginx: string, moduleFiles: string[]): Promise<boolean> {
  if (moduleFiles.some((file) => file.endsWith('ngx_http_lua_module.so'))) return true;
  const output = await new Promise<string>((resolve) => {
    execFile(nginx, ['-V'], { timeout: 10_000 }, (_err, stdout, stderr) =>
      resolve(`${stdout}${stderr}`),
    );
  });
  return /lua-nginx-module|http_lua_module/.test(output);
}
