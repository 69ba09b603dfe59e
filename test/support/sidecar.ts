import type { Clock } from '../../sidecar/clock.js';
import { type DebugFields, debugFields, type Logger, silentLogger } from '../../sidecar/log.js';
import { type RunningSidecar, startSidecar } from '../../sidecar/sidecar.js';
import { STAND_IN_FOR_NGINX } from './nginx-stand-in.js';

export interface TestSidecar extends RunningSidecar {
  /** The bootstrap admin key printed at start (API_KEY_CREATE=true), when asked for. */
  adminKey: string;
  printed: string[];
}

/** Starts a real sidecar in-process on a random loopback port against `databaseUrl`. */
export async function startTestSidecar(
  databaseUrl: string,
  {
    bootstrap = true,
    clock,
    log = silentLogger,
    failureFlushMs,
    metrics = false,
    proofFile,
  }: {
    bootstrap?: boolean;
    clock?: Clock;
    log?: Logger;
    failureFlushMs?: number;
    /** Also serve /metrics (and /livez, /readyz) on a random loopback port: `metricsUrl`. */
    metrics?: boolean;
    /** Check nginx's proof against this file; by default the test stands in for nginx. */
    proofFile?: string;
  } = {},
): Promise<TestSidecar> {
  const printed: string[] = [];
  const sidecar = await startSidecar(
    {
      databaseUrl,
      listen: { host: '127.0.0.1', port: 0 },
      ...(metrics ? { metricsListen: { host: '127.0.0.1', port: 0 } } : {}),
      ...(proofFile ? { proofFile } : {}),
    },
    {
      log,
      env: { API_KEY_CREATE: bootstrap ? 'true' : 'false' },
      print: (line) => printed.push(line),
      ...(clock ? { clock } : {}),
      ...(failureFlushMs !== undefined ? { failureFlushMs } : {}),
      ...(proofFile ? {} : { proof: STAND_IN_FOR_NGINX }),
    },
  );
  const line = printed.find((l) => l.startsWith('NEWLY GENERATED API KEY: '));
  return { ...sidecar, printed, adminKey: line?.slice('NEWLY GENERATED API KEY: '.length) ?? '' };
}

export const apk = (key: string) => ({ Authorization: `apk ${key}` });

/** A clock tests move by hand: starts at the real time, never moves by itself. */
export function movableClock(start: number = Date.now()): Clock & { advance(ms: number): void } {
  let now = start;
  return Object.assign(() => now, {
    advance(ms: number) {
      now += ms;
    },
  });
}

/** A logger that keeps every line (JSON as the real one writes it) for the test to read. */
export function capturingLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const at =
    (bound: Record<string, unknown>) =>
    (level: string) =>
    (message: string, fields?: DebugFields) => {
      lines.push(JSON.stringify({ level, message, ...bound, ...debugFields(fields) }));
    };
  const logger = (bound: Record<string, unknown>): Logger => {
    const write = at(bound);
    return {
      debug: write('debug'),
      info: write('info'),
      warn: write('warn'),
      error: write('error'),
      child: (fields) => logger({ ...bound, ...fields }),
    };
  };
  return { lines, ...logger({}) };
}
