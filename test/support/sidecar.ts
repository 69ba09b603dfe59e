import { silentLogger } from '../../sidecar/log.js';
import { type RunningSidecar, startSidecar } from '../../sidecar/sidecar.js';

export interface TestSidecar extends RunningSidecar {
  /** The bootstrap admin key printed at start (API_KEY_CREATE=true), when asked for. */
  adminKey: string;
  printed: string[];
}

/** Starts a real sidecar in-process on a random loopback port against `databaseUrl`. */
export async function startTestSidecar(
  databaseUrl: string,
  { bootstrap = true }: { bootstrap?: boolean } = {},
): Promise<TestSidecar> {
  const printed: string[] = [];
  const sidecar = await startSidecar(
    { databaseUrl, listen: { host: '127.0.0.1', port: 0 } },
    {
      log: silentLogger,
      env: { API_KEY_CREATE: bootstrap ? 'true' : 'false' },
      print: (line) => printed.push(line),
    },
  );
  const line = printed.find((l) => l.startsWith('NEWLY GENERATED API KEY: '));
  return { ...sidecar, printed, adminKey: line?.slice('NEWLY GENERATED API KEY: '.length) ?? '' };
}

export const apk = (key: string) => ({ Authorization: `apk ${key}` });
