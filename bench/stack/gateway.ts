import { join } from 'node:path';
import { launchNativeGateway } from '../../test/support/native-gateway.js';
import { withTimeout } from '../cleanup.js';

export interface GatewayPids {
  runner: number | undefined;
  nginx: number | undefined;
  sidecar: number | undefined;
  app: number | undefined;
}

/** A native gateway (`npm start`'s `dist/native/main.js`) in its own home, on a free port. */
export interface BenchGateway {
  name: string;
  home: string;
  port: number;
  /** `https://127.0.0.1:<port>`: callers connect to loopback and present SNI `localhost`. */
  url: string;
  /** The bootstrap admin key (only the gateway started with `createKey`). */
  adminKey: string;
  /** The certificate nginx serves (self-signed, CN `localhost`): what clients trust. */
  ca: string;
  /** The sidecar's metrics listener (`http://127.0.0.1:<port>`, GET /metrics). */
  metricsUrl: string;
  configDir: string;
  appSocket: string;
  pids: GatewayPids;
  stop(): Promise<void>;
}

export interface GatewayStart {
  name: string;
  /** A fresh directory for GATEWAY_HOME (short: it holds unix sockets). */
  home: string;
  databaseUrl: string;
  createKey: boolean;
  /** Extra environment (GATEWAY_SETTINGS, OIDC_CA_FILE...). */
  env: Record<string, string>;
  engineAdminPassword: string;
  /** The HTTPS port, when its configuration was rendered before the start; default: a free one. */
  port?: number;
}

/** Starts the runner through the tests' harness, exactly as an operator would. */
export async function startGateway(start: GatewayStart): Promise<BenchGateway> {
  const gateway = await launchNativeGateway({
    home: start.home,
    ...(start.port !== undefined ? { port: start.port } : {}),
    env: {
      DATABASE_URL: start.databaseUrl,
      ENGINE_ADMIN_PASSWORD: start.engineAdminPassword,
      API_KEY_CREATE: start.createKey ? 'true' : 'false',
      ...start.env,
    },
  });
  const stop = async () => {
    try {
      await withTimeout(gateway.stop(), 20_000, `${start.name} runner`);
    } catch {
      gateway.runner.child.kill('SIGKILL');
    }
  };
  if (start.createKey && !gateway.adminKey) {
    await stop();
    throw new Error(`${start.name}: no bootstrap key printed`);
  }
  return {
    name: start.name,
    home: start.home,
    port: gateway.port,
    url: gateway.loopbackUrl,
    adminKey: gateway.adminKey,
    ca: gateway.ca,
    metricsUrl: gateway.metricsUrl,
    configDir: gateway.configDir,
    appSocket: join(start.home, 'run', 'app.sock'),
    pids: {
      runner: gateway.runner.child.pid,
      nginx: await gateway.pid('nginx'),
      sidecar: await gateway.pid('sidecar'),
      app: await gateway.pid('app'),
    },
    stop,
  };
}
