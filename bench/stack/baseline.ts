import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { LAYOUT, loadSettings, prepareProxy } from '../../generator/index.js';
import { locateNginx, waitForHttps } from '../../native/nginx.js';
import { freePort } from '../../native/ports.js';
import { nginxWorkerAccount } from '../../native/privileges.js';
import {
  type DerivedConf,
  deriveBaselineConf,
  deriveCacheOffConf,
  deriveRendered,
  listenPorts,
} from './baseline-conf.js';
import { spawnNginx } from './nginx-process.js';

/** A second nginx serving a copy of a gateway's configuration with one thing changed. */
export interface Baseline {
  url: string;
  port: number;
  /** The nginx master (its workers are its children). */
  pid: number | undefined;
  /** What was changed from the gateway's default.conf. */
  changes: string[];
  stop(): Promise<void>;
}

/** The gateway's configuration with authentication off (see deriveBaselineConf). */
export function startBaseline(dir: string, gatewayConfigDir: string): Promise<Baseline> {
  return startDerived(dir, gatewayConfigDir, deriveBaselineConf, 'baseline nginx');
}

/** The gateway's configuration with its decision cache off (see deriveCacheOffConf). */
export function startCacheOff(dir: string, gatewayConfigDir: string): Promise<Baseline> {
  return startDerived(dir, gatewayConfigDir, deriveCacheOffConf, 'cache-off nginx');
}

/**
 * The gateway's configuration as it is, or (`rendered`) its settings rendered again with one
 * thing more (see deriveRendered): the two sides of a row that compares renders.
 */
export function startRendered(
  dir: string,
  gatewayConfigDir: string,
  what: string,
  rendered?: { same: string; changed: string },
): Promise<Baseline> {
  return startDerived(dir, gatewayConfigDir, deriveRendered(rendered), what);
}

type Derive = (conf: string, ports: Map<number, number>, runtimeDir: string) => DerivedConf;

/**
 * A second nginx (the same binary the gateway runs) serving a derived copy of the gateway's
 * default.conf (see baseline-conf.ts), from its own configuration and runtime
 * directories under `dir`, started through the same step as the gateway's proxy
 * (`prepareProxy`: same main nginx.conf, Lua path, worker user, logging to a file, nginx -t).
 */
async function startDerived(
  dir: string,
  gatewayConfigDir: string,
  derive: Derive,
  what: string,
): Promise<Baseline> {
  const configDir = join(dir, 'config');
  const runtimeDir = join(dir, 'run');
  await mkdir(runtimeDir, { recursive: true });
  const gatewayConf = await readFile(join(gatewayConfigDir, LAYOUT.defaultConf), 'utf8');
  const ports = new Map<number, number>();
  for (const port of listenPorts(gatewayConf)) ports.set(port, await freePort());
  const derived = derive(gatewayConf, ports, runtimeDir);
  const confFile = join(configDir, LAYOUT.defaultConf);
  await mkdir(join(confFile, '..'), { recursive: true });
  await writeFile(confFile, derived.text);
  const nginx = locateNginx(process.env);
  const worker = await nginxWorkerAccount();
  const proxy = await prepareProxy({
    configDir,
    settings: await loadSettings({ env: {}, defaults: { config_dir: configDir } }),
    runtimeDir,
    errorLog: join(dir, 'nginx-error.log'),
    accessLog: join(dir, 'nginx-access.log'),
    ...(worker ? { user: worker.user } : {}),
    nginx,
  });
  const port = proxy.httpsPort;
  const child = spawnNginx(nginx, proxy.nginxArgs);
  try {
    await waitForHttps(port, 15_000, child.running);
  } catch (err) {
    await child.stop();
    const log = await readFile(join(dir, 'nginx-error.log'), 'utf8').catch(() => '');
    throw new Error(`${what}: ${(err as Error).message}\n${child.stderr()}${log}`);
  }
  return {
    url: `https://127.0.0.1:${port}`,
    port,
    pid: child.pid,
    changes: derived.changes,
    stop: child.stop,
  };
}
