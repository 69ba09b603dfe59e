import { SIDECAR_PROOF } from '../common/contract.js';
import type { ListenAddress } from '../common/listen.js';
import { type LogLevel, readLogLevel } from './log.js';

/** The sidecar's settings, all from the environment. */
export interface SidecarConfig {
  databaseUrl: string;
  listen: ListenAddress;
  /** nginx's control socket, to invalidate its decisions; absent: no nginx to tell. */
  controlSocket?: string | null;
  /** `/metrics`, `/livez`, `/readyz`: never the public port; null or absent: not served. */
  metricsListen?: ListenAddress | null;
  logLevel?: LogLevel;
  /** nginx's proof secret (GATEWAY_PROOF_FILE); absent: DEFAULT_PROOF_FILE. */
  proofFile?: string;
}

/**
 * Where the proof secret is unless GATEWAY_PROOF_FILE says otherwise: the containers'
 * configuration directory (/etc/config), mounted read-only into the sidecar's.
 */
export const DEFAULT_PROOF_FILE = `/etc/config/${SIDECAR_PROOF.file}`;

/** Where the metrics listener binds unless METRICS_LISTEN says otherwise: loopback only. */
export const DEFAULT_METRICS_LISTEN = '127.0.0.1:9464';

/**
 * Reads every variable and reports every problem at once: DATABASE_URL, HOST and PORT (or
 * SOCKET), NGINX_CONTROL_SOCKET, METRICS_LISTEN, LOG_LEVEL, GATEWAY_PROOF_FILE.
 */
export function readConfig(env: NodeJS.ProcessEnv): SidecarConfig {
  const problems: string[] = [];
  const databaseUrl = env.DATABASE_URL ?? '';
  if (!databaseUrl) problems.push('DATABASE_URL is not set (e.g. postgres://user:pass@host/db)');
  const controlSocket = env.NGINX_CONTROL_SOCKET || null;
  let listen: ListenAddress = { socket: env.SOCKET ?? '' };
  // SOCKET (a unix socket path) wins over HOST and PORT; the native run uses it.
  if (!env.SOCKET) {
    const port = Number(env.PORT ?? '8081');
    if (!Number.isInteger(port) || port < 0 || port > 65_535) {
      problems.push(`PORT must be a TCP port number, got ${JSON.stringify(env.PORT)}`);
    }
    listen = { host: env.HOST ?? '127.0.0.1', port };
  }
  let metricsListen: ListenAddress | null = null;
  try {
    metricsListen = parseMetricsListen(env.METRICS_LISTEN);
  } catch (err) {
    problems.push((err as Error).message);
  }
  let logLevel: LogLevel = 'info';
  try {
    logLevel = readLogLevel(env.LOG_LEVEL);
  } catch (err) {
    problems.push((err as Error).message);
  }
  const proofFile = env.GATEWAY_PROOF_FILE || DEFAULT_PROOF_FILE;
  if (!proofFile.startsWith('/')) {
    problems.push(`GATEWAY_PROOF_FILE must be an absolute path, got ${JSON.stringify(proofFile)}`);
  }
  if (problems.length > 0) throw new Error(problems.join('; '));
  return { databaseUrl, listen, controlSocket, metricsListen, logLevel, proofFile };
}

/**
 * METRICS_LISTEN: `host:port` (`[::1]:9464` for IPv6), an absolute path for a unix socket, or
 * `off`. Unset or empty: 127.0.0.1:9464.
 */
export function parseMetricsListen(value: string | undefined): ListenAddress | null {
  const text = (value ?? '').trim() || DEFAULT_METRICS_LISTEN;
  if (text === 'off') return null;
  if (text.startsWith('/')) return { socket: text };
  const match = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(text);
  const port = Number(match?.[2]);
  if (!match || port > 65_535) {
    throw new Error(
      `METRICS_LISTEN must be host:port, an absolute unix socket path or off, got ${JSON.stringify(value)}`,
    );
  }
  return { host: match[1]!.replace(/^\[|\]$/g, ''), port };
}
