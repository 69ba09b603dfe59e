import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { CONSOLE_NGINX, NGINX_MODULE, TRACE_CONTEXT } from '../common/contract.js';
import { packageRoot } from '../common/package-root.js';
import { SettingsError } from './errors.js';
import { replaceFile } from './file-writes.js';
import { inConfigDir, LAYOUT } from './layout.js';
import { quoted } from './nginx-literal.js';
import { ABSOLUTE_PATH, USER_NAME } from './patterns.js';
import { describeIssues } from './settings-issues.js';
import { renderTemplate } from './templates.js';

const absolutePath = z.string().regex(ABSOLUTE_PATH, { message: 'must be an absolute path' });

const mainConfSchema = z.strictObject({
  /** pid file and temporary files; the native runner's state folder, or e.g. /run/gateway. */
  runtimeDir: absolutePath,
  /** The configuration directory as nginx sees it; its nginx/conf.d/*.conf are included. */
  configDir: absolutePath,
  /** `stderr` or a file; default `<runtimeDir>/error.log`. */
  errorLog: z.union([z.literal('stderr'), absolutePath]).optional(),
  errorLogLevel: z.enum(['debug', 'info', 'notice', 'warn', 'error', 'crit']).default('warn'),
  /** `off`, `stdout` or a file; default `<runtimeDir>/access.log`. */
  accessLog: z.union([z.literal('off'), z.literal('stdout'), absolutePath]).optional(),
  workerProcesses: z.union([z.literal('auto'), z.number().int().min(1).max(256)]).default('auto'),
  workerConnections: z.number().int().min(16).max(65536).default(1024),
  /** Worker user when the master runs as root; omitted: nginx's built-in default. */
  user: z.string().regex(USER_NAME, { message: 'must be a user name' }).optional(),
  /** The folder holding the `gateway` Lua package; default: `lua/` of this package. */
  luaDir: absolutePath.optional(),
  /** The folder holding `console/` (the browser console's files); default: this package. */
  staticRoot: absolutePath.optional(),
  /** Dynamic modules to load (the Lua module where nginx has it as one); default: detected. */
  modules: z.array(absolutePath).optional(),
});

export type MainConfOptions = z.input<typeof mainConfSchema>;

// Debian's libnginx-mod-http-lua: the Lua module and the devel kit it needs, loaded in this
// order. OpenResty builds both in, so where the files are absent nothing is loaded.
const LUA_MODULE_FILES = [
  '/usr/lib/nginx/modules/ndk_http_module.so',
  '/usr/lib/nginx/modules/ngx_http_lua_module.so',
];

/**
 * Where the gateway's own module (nginx-module/) is looked for, first found wins: built for the
 * native run by scripts/build-nginx-module.sh (build/ of this package), or installed beside
 * Debian's modules (the proxy image). Loaded after the Lua module, whose functions it calls.
 * `GATEWAY_NGINX_MODULE_DIR` names another build's directory, the only place then looked in:
 * the module built with sanitizers, which the sanitizer suite runs (test/sanitizers/).
 */
export function gatewayModuleFiles(env: NodeJS.ProcessEnv = process.env): string[] {
  const dir = env.GATEWAY_NGINX_MODULE_DIR;
  if (dir) return [join(dir, NGINX_MODULE.file)];
  return [
    join(packageRoot(), 'build', 'nginx-module', NGINX_MODULE.file),
    join('/usr/lib/nginx/modules', NGINX_MODULE.file),
  ];
}

/** The dynamic modules the gateway needs that this machine has as files. */
export function detectModules(
  files: readonly string[] = LUA_MODULE_FILES,
  gatewayModules: readonly string[] = gatewayModuleFiles(),
): string[] {
  const gateway = gatewayModules.find((file) => existsSync(file));
  return [...files.filter((file) => existsSync(file)), ...(gateway ? [gateway] : [])];
}

/** The project's Lua sources, beside templates/ in the package (also in the proxy image). */
export function defaultLuaDir(): string {
  return join(packageRoot(), 'lua');
}

// nginx creates all of these at start-up; the compiled-in defaults need root.
const TEMP_PATHS = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'] as const;

/** Renders the main nginx.conf (`templates/nginx.conf.hbs`) for a runtime directory. */
export function renderMainConf(options: MainConfOptions): string {
  const parsed = mainConfSchema.safeParse(options);
  if (!parsed.success) {
    throw new SettingsError('main nginx.conf options', describeIssues(parsed.error.issues));
  }
  const o = parsed.data;
  const errorLog = o.errorLog ?? join(o.runtimeDir, 'error.log');
  const accessLog = o.accessLog ?? join(o.runtimeDir, 'access.log');
  const luaDir = o.luaDir ?? defaultLuaDir();
  return renderTemplate('nginx.conf.hbs', {
    modules: (o.modules ?? detectModules()).map((m) => quoted(m)),
    // `;;` keeps the default search path, where Debian and OpenResty keep resty.core.
    luaPackagePath: quoted(`${join(luaDir, '?.lua')};;`),
    staticRoot: {
      name: CONSOLE_NGINX.staticRootVariable,
      value: quoted(o.staticRoot ?? packageRoot()),
    },
    traceparent: TRACE_CONTEXT.variable,
    workerProcesses: String(o.workerProcesses),
    workerConnections: o.workerConnections,
    pid: quoted(join(o.runtimeDir, 'nginx.pid')),
    errorLog: errorLog === 'stderr' ? 'stderr' : quoted(errorLog),
    errorLogLevel: o.errorLogLevel,
    user: o.user ?? null,
    // The `gateway` format (nginx.conf.hbs): combined plus the request id.
    accessLog:
      accessLog === 'off'
        ? 'off'
        : `${quoted(accessLog === 'stdout' ? '/dev/stdout' : accessLog)} gateway`,
    tempPaths: TEMP_PATHS.map((name) => ({
      name: `${name}_temp_path`,
      value: quoted(join(o.runtimeDir, `${name}_temp`)),
    })),
    include: quoted(inConfigDir(o.configDir, LAYOUT.confGlob)),
  });
}

/** Path of the main configuration inside a runtime directory. */
export function mainConfPath(runtimeDir: string): string {
  return join(runtimeDir, 'nginx.conf');
}

/** Writes `<runtimeDir>/nginx.conf` (replacing it) and returns its path. */
export async function writeMainConf(options: MainConfOptions): Promise<string> {
  const text = renderMainConf(options);
  await mkdir(options.runtimeDir, { recursive: true });
  const path = mainConfPath(options.runtimeDir);
  await replaceFile(path, text);
  return path;
}

/**
 * Arguments that start nginx on a runtime directory written by `writeMainConf`. `-e stderr`
 * keeps nginx from opening its compiled-in error log (often under /var/log) before it has
 * read the configuration.
 */
export function nginxArgs(runtimeDir: string): string[] {
  return ['-p', `${runtimeDir}/`, '-c', mainConfPath(runtimeDir), '-e', 'stderr'];
}
