import { readFile, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { NGINX_NAMES } from '../common/contract.js';
import { LAYOUT } from './layout.js';
import { readServerConf } from './rendered-conf.js';

/**
 * What the native run (`npm start`) needs `default.conf` to say: its sidecar, its app and its
 * control socket live at paths of its own home, not at the container defaults. The run writes
 * this next to the configuration directory (`<GATEWAY_HOME>/native-home.json`) at every start,
 * so that `gateway-config render` and `check` on that directory know where it will run.
 */
export interface NativeHome {
  configDir: string;
  /** `unix:/…/run/sidecar.sock` */
  sidecar: string;
  /** `unix:/…/run/app.sock`, or the operator's application (GATEWAY_APP_UPSTREAM). */
  app: string;
  controlSocket: string;
  /** The HTTPS port it listened on last (8443 unless GATEWAY_HTTPS_PORT): render's default. */
  httpsPort: number;
}

/** Where the native run's processes are: what default.conf must name. */
export type NativePlaces = Omit<NativeHome, 'httpsPort'>;

export const NATIVE_HOME_FILE = 'native-home.json';

/** The upstream blocks' names in default.conf (template-model.ts renders them). */
const UPSTREAM_NAMES = { sidecar: 'gateway_sidecar', app: 'gateway_app' } as const;

export async function writeNativeHome(home: NativeHome): Promise<void> {
  await writeFile(
    join(dirname(home.configDir), NATIVE_HOME_FILE),
    `${JSON.stringify(home, null, 2)}\n`,
  );
}

/** The native run's description of `configDir`, when `configDir` is a native home's; else null. */
export async function readNativeHome(configDir: string): Promise<NativeHome | null> {
  const dir = resolve(configDir);
  const text = await readFile(join(dirname(dir), NATIVE_HOME_FILE), 'utf8').catch(() => null);
  if (text === null) return null;
  try {
    const home = JSON.parse(text) as NativeHome;
    return home.configDir === dir ? home : null;
  } catch {
    return null;
  }
}

/** What a render for the native home starts from, below the settings file and the variables. */
export function nativeDefaults(home: NativeHome) {
  return { config_dir: home.configDir, https_port: home.httpsPort };
}

/** The settings the native run always renders with (over the file and the variables). */
export function nativeOverrides(home: NativePlaces) {
  return {
    config_dir: home.configDir,
    upstreams: { app: home.app, sidecar: home.sidecar },
    auth_cache: { control_socket: home.controlSocket },
  };
}

/**
 * Where `default.conf` sends nginx differs from where the native run's processes are: each
 * difference, naming the file, the line and what the run needs. Empty when they agree.
 */
export function nativeConfProblems(defaultConf: string, home: NativePlaces): string[] {
  const file = join(home.configDir, LAYOUT.defaultConf);
  const facts = readServerConf(defaultConf);
  const problems: string[] = [];
  const differs = (role: string, where: string, found: string | undefined, needed: string) => {
    if (found !== needed)
      problems.push(
        `${file}: the ${role} (${where}) is ${found ?? '(absent)'}, but the native run's ${role} is at ${needed}`,
      );
  };
  const { sidecar, app } = UPSTREAM_NAMES;
  differs('sidecar', `upstream ${sidecar}`, facts.upstreams[sidecar], home.sidecar);
  // The Lua code's one hop: empty means "through the control socket", which is fine.
  if (facts.sidecarVariable)
    differs('sidecar', '$gateway_sidecar', facts.sidecarVariable, home.sidecar);
  differs('app', `upstream ${app}`, facts.upstreams[app], home.app);
  differs('control socket', 'listen unix:', facts.unixSockets[0], home.controlSocket);
  if (problems.length > 0)
    problems.push(
      'This file was not written for this native home (a `gateway-config render` without its ' +
        'values, or a copy from a container?): nginx would answer every request 503. Render it ' +
        `again for this home with \`npx gateway-config render ${home.configDir} --force\` ` +
        '(it keeps the native values, and lists what it replaces), or correct those lines.',
    );
  return problems;
}

/** What `repairNativeConf` changed: one line each, for the operator. */
export interface NativeRepair {
  text: string;
  changes: string[];
}

/**
 * Points default.conf's sidecar, app and control socket at the native run's, changing those
 * lines only: every other line, an operator's edits included, stays as it is. The native run
 * does this at start (GATEWAY_APP_UPSTREAM may name another app than the last run's; a file
 * rendered for containers names container paths) and says what it changed.
 */
export function repairNativeConf(defaultConf: string, home: NativePlaces): NativeRepair {
  const changes: string[] = [];
  const wanted: Record<string, string> = {
    [UPSTREAM_NAMES.sidecar]: home.sidecar,
    [UPSTREAM_NAMES.app]: home.app,
  };
  let upstream: string | null = null;
  let controlDone = false;
  let oldControl: string | null = null;
  const seen = new Set<string>();
  const lines = defaultConf.split('\n').map((line) => {
    const code = line.replace(/#.*$/, '');
    const opened = /^\s*upstream\s+(\S+)\s*\{/.exec(code);
    if (opened) upstream = opened[1]!;
    let out = line;
    const server = /^(\s*server\s+)([^\s;]+)/.exec(code);
    if (upstream && server && !seen.has(upstream) && wanted[upstream] !== undefined) {
      seen.add(upstream);
      const want = wanted[upstream]!;
      if (server[2] !== want) {
        changes.push(`upstream ${upstream}: ${server[2]} → ${want}`);
        out = `${server[1]}${want}${line.slice(server[0].length)}`;
      }
    }
    if (upstream && /}/.test(code)) upstream = null;
    const listen = /^(\s*listen\s+)("unix:[^"]+"|'unix:[^']+'|unix:[^\s;]+)/.exec(code);
    if (listen && !controlDone) {
      controlDone = true;
      const found = listen[2]!.replace(/^["']|["']$/g, '').slice('unix:'.length);
      if (found !== home.controlSocket) {
        oldControl = found;
        changes.push(`control socket: ${found} → ${home.controlSocket}`);
        out = `${listen[1]}"unix:${home.controlSocket}"${line.slice(listen[0].length)}`;
      }
    }
    return out;
  });
  // The variables that repeat those addresses for the Lua code.
  const text = lines
    .join('\n')
    .replace(
      new RegExp(`^(\\s*set\\s+\\${NGINX_NAMES.sidecarVariable}\\s+")([^"]+)(";)`, 'm'),
      (all, head: string, value: string, tail: string) => {
        if (value === home.sidecar) return all;
        changes.push(`${NGINX_NAMES.sidecarVariable}: ${value} → ${home.sidecar}`);
        return `${head}${home.sidecar}${tail}`;
      },
    )
    .replace(
      new RegExp(`^(\\s*set\\s+\\${NGINX_NAMES.controlSocketVariable}\\s+"unix:)([^"]+)(";)`, 'm'),
      (all, head: string, value: string, tail: string) =>
        oldControl !== null && value === oldControl ? `${head}${home.controlSocket}${tail}` : all,
    );
  return { text, changes };
}
