import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ensureConfigDir,
  LAYOUT,
  loadSettings,
  type RawSettings,
} from '../../../../generator/index.js';
import { freePort } from '../../../support/embedded-postgres.js';
import { type RunningNginx, startNginx } from './nginx.js';
import { type SeenRequest, type StubServer, sendJson, startStub } from './stub-server.js';

/**
 * The real nginx with a rendered configuration directory, in front of a stub sidecar and a
 * stub app written for these tests (the real sidecar is exercised end to end elsewhere).
 */
export interface GatewayUnderTest {
  configDir: string;
  /** The generated certificate, which clients trust as their CA. */
  ca: string;
  httpsPort: number;
  httpPort: number;
  stubSidecar: StubServer;
  stubApp: StubServer;
  nginx: RunningNginx;
  /** Restores the default stub behaviour and forgets recorded requests. */
  reset(): void;
  /** The control socket (unix), as the sidecar would reach it. */
  controlSocket: string;
  /** Requests the stub sidecar saw on `/auth`. */
  authCalls(): SeenRequest[];
  stop(): Promise<void>;
}

/** What the real sidecar answers with a "yes": the client's row and its identity. */
export const DEFAULT_IDENTITY: Readonly<Record<string, string>> = {
  'X-Gateway-Client-Row': '1',
  'X-Client-Id': '1',
  'X-Client-Name': 'stub',
  'X-Client-Is-Admin': 'false',
  'X-Auth-Method': 'apk',
};

/** A stub sidecar answer: 204 with the default identity headers, overridden by these. */
export function allow(identity: Record<string, string> = {}) {
  return (_: SeenRequest, res: ServerResponse) => {
    res.writeHead(204, { ...DEFAULT_IDENTITY, ...identity });
    res.end();
  };
}

/** The stub app's default answer: 200 JSON naming the URL it got. */
export function appEcho(seen: SeenRequest, res: ServerResponse): void {
  sendJson(res, 200, { app: true, url: seen.url });
}

export interface GatewayOptions {
  /** Settings on top of the harness's ports, upstreams and directory. */
  settings?: RawSettings;
  /** Runs after the directory is complete and before nginx starts (hand edits). */
  beforeStart?: (configDir: string) => Promise<void>;
  /** How the settings name the stub sidecar's host: an IPv4 literal (default) or a name. */
  sidecarHost?: string;
  /** Whether nginx writes its access log (RunningNginx.accessLog reads it); default off. */
  accessLog?: boolean;
}

export async function startGateway(options: GatewayOptions = {}): Promise<GatewayUnderTest> {
  const home = await mkdtemp(join(tmpdir(), 'gw-nginx-'));
  // nginx workers (an unprivileged user when the tests run as root) reach the control socket here.
  await chmod(home, 0o755);
  const configDir = join(home, 'config');
  const stubSidecar = await startStub(allow());
  const stubApp = await startStub(appEcho);
  const httpsPort = await freePort();
  const httpPort = await freePort();
  const settings = await loadSettings({
    // The stub sidecar's answers change from test to test; reusing them is tested on its own
    // (nginx-auth-cache.test.ts), with the cache switched on there.
    defaults: { auth_cache: { max_age_ms: 0 }, ...options.settings },
    overrides: {
      auth_cache: {
        ...(options.settings?.auth_cache as object | undefined),
        control_socket: join(home, 'control.sock'),
      },
      fqdn: 'localhost',
      https_port: httpsPort,
      http_redirect_port: httpPort,
      config_dir: configDir,
      upstreams: {
        app: `127.0.0.1:${stubApp.port}`,
        sidecar: `${options.sidecarHost ?? '127.0.0.1'}:${stubSidecar.port}`,
      },
    },
  });
  await ensureConfigDir(configDir, settings);
  await options.beforeStart?.(configDir);
  const nginx = await startNginx(configDir, httpsPort, { accessLog: options.accessLog ?? false });
  const gateway: GatewayUnderTest = {
    configDir,
    controlSocket: join(home, 'control.sock'),
    ca: await readFile(join(configDir, LAYOUT.certificate), 'utf8'),
    httpsPort,
    httpPort,
    stubSidecar,
    stubApp,
    nginx,
    reset() {
      gateway.stubSidecar.requests.length = 0;
      gateway.stubApp.requests.length = 0;
      gateway.stubSidecar.handler = allow();
      gateway.stubApp.handler = appEcho;
    },
    authCalls: () => gateway.stubSidecar.requests.filter((r) => r.url === '/auth'),
    async stop() {
      await nginx.stop();
      await gateway.stubSidecar.close();
      await stubApp.close();
      await rm(home, { recursive: true, force: true });
    },
  };
  return gateway;
}
