import { randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import {
  GenericContainer,
  getContainerRuntimeClient,
  getReaper,
  LABEL_TESTCONTAINERS_SESSION_ID,
  Network,
  type StartedNetwork,
  Wait,
} from 'testcontainers';
import { GatewayStartError } from './errors.js';
import { ensureImages, type GatewayImages, imageNames, tail } from './images.js';
import {
  type GatewaySettings,
  mergeSettings,
  type OidcOptions,
  oidcSettings,
  resolveSettings,
} from './options.js';
import { type Parts, StartedGatewayContainer } from './started-gateway.js';

const CONTROL_DIR = '/run/gateway-control';
const SETTINGS_FILE = '/etc/gateway/settings.yaml';
const CONFIG_DIR = '/etc/config';
const OIDC_CA_FILE = '/etc/gateway/oidc-ca.pem';
const KEY_LINE = /NEWLY GENERATED API KEY: (\S+)/;

/**
 * The authenticating gateway in front of your application, for your tests: nginx (the proxy),
 * the sidecar that checks credentials, and PostgreSQL (or yours), started with testcontainers.
 *
 *   const gateway = await new GatewayContainer().withHostApp(3000).start();
 *   const { key } = await gateway.createClient();
 *   // https GET gateway.getBaseUrl() + '/x' with ca: gateway.getCaCertificate(), apk <key>
 */
export class GatewayContainer {
  private images: Partial<GatewayImages> = {};
  private settings: GatewaySettings = {};
  private app: string | undefined;
  private hostAppPort: number | undefined;
  private network: StartedNetwork | undefined;
  private databaseUrl: string | undefined;
  private oidcCa: string | undefined;
  private gatewayEnv: Record<string, string> = {};
  private startupTimeoutMs = 120_000;
  private readonly problems: string[] = [];

  /** The application as `host:port` on the network given to withNetwork (e.g. `myapp:8080`). */
  withApp(address: string): this {
    this.app = address;
    return this;
  }

  /**
   * The application listening on this machine (the one running the tests) on `port`, on all
   * interfaces: the proxy reaches it through the engine's host name (host.containers.internal
   * on podman, host.docker.internal on Docker).
   */
  withHostApp(port: number): this {
    if (!Number.isInteger(port) || port < 1 || port > 65535) {
      this.problems.push(`withHostApp: ${port} is not a port (1 to 65535)`);
    }
    this.hostAppPort = port;
    return this;
  }

  /** Join your network (where your app and database run); default: a network of its own. */
  withNetwork(network: StartedNetwork): this {
    this.network = network;
    return this;
  }

  /** Use your PostgreSQL (a URL the gateway's container can reach) instead of starting one. */
  withDatabaseUrl(url: string): this {
    this.databaseUrl = url;
    return this;
  }

  /** nginx settings (`default.conf`, `ssl.conf`): gateway.example.yaml's keys; merged deeply. */
  withSettings(settings: GatewaySettings): this {
    this.settings = mergeSettings(this.settings, settings);
    return this;
  }

  /** API keys on or off (`api_keys_enabled`; default on). */
  withApiKeys(enabled: boolean): this {
    return this.withSettings({ api_keys_enabled: enabled });
  }

  /** Bearer tokens from an OpenID Connect provider (`open_id_connect_enabled` and its options). */
  withOidc(oidc: OidcOptions): this {
    this.oidcCa = oidc.caCertificate;
    return this.withSettings(oidcSettings(oidc, undefined));
  }

  /** Image names; default: GW_PROXY_IMAGE, GW_GATEWAY_IMAGE, GW_POSTGRES_IMAGE, else the built ones. */
  withImages(images: Partial<GatewayImages>): this {
    this.images = { ...this.images, ...images };
    return this;
  }

  /** Extra environment of the sidecar, e.g. `{ LOG_LEVEL: 'debug' }`. */
  withGatewayEnvironment(env: Record<string, string>): this {
    this.gatewayEnv = { ...this.gatewayEnv, ...env };
    return this;
  }

  withStartupTimeout(ms: number): this {
    this.startupTimeoutMs = ms;
    return this;
  }

  /** Starts everything, healthy; on failure removes what it started and says why. */
  async start(): Promise<StartedGatewayContainer> {
    const id = randomBytes(4).toString('hex');
    const sidecarAlias = `gw-sidecar-${id}`;
    // Checked before any container: bad settings cost nothing and are all listed at once.
    const placeholderApp =
      this.hostAppPort === undefined ? this.app : `host.containers.internal:${this.hostAppPort}`;
    resolveSettings(this.settings, {
      app: placeholderApp,
      sidecar: `${sidecarAlias}:8081`,
      controlSocket: `${CONTROL_DIR}/nginx.sock`,
    });
    if (this.problems.length > 0) {
      throw new GatewayStartError(
        'INVALID_OPTIONS',
        `GatewayContainer: invalid options, nothing started:\n${this.problems.map((p) => `  - ${p}`).join('\n')}`,
      );
    }
    if (this.app !== undefined && this.hostAppPort !== undefined) {
      throw new GatewayStartError(
        'INVALID_OPTIONS',
        'GatewayContainer: withApp and withHostApp both given; the gateway fronts one application',
      );
    }
    const images = imageNames(this.images);
    await ensureImages(images);

    const client = await getContainerRuntimeClient();
    const podman = await isPodman();
    const hostName = podman ? 'host.containers.internal' : 'host.docker.internal';
    const app = this.hostAppPort === undefined ? this.app : `${hostName}:${this.hostAppPort}`;
    const resolved = resolveSettings(this.settings, {
      app,
      sidecar: `${sidecarAlias}:8081`,
      controlSocket: `${CONTROL_DIR}/nginx.sock`,
    });

    const reaper = await getReaper(client);
    const labels = { [LABEL_TESTCONTAINERS_SESSION_ID]: reaper.sessionId, 'gw.gateway': id };
    const parts: Parts = {
      containers: [],
      logs: {},
      volume: `gw-control-${id}`,
      configVolume: `gw-config-${id}`,
    };
    const keep = (service: string) => (stream: Readable) => {
      parts.logs[service] = '';
      stream.on('data', (chunk: Buffer | string) => {
        parts.logs[service] += chunk.toString();
      });
    };
    let started: StartedGatewayContainer | undefined;
    try {
      if (this.network === undefined) parts.ownNetwork = await new Network().start();
      const network = this.network ?? parts.ownNetwork!;
      await client.container.dockerode.createVolume({ Name: parts.volume, Labels: labels });
      await client.container.dockerode.createVolume({ Name: parts.configVolume, Labels: labels });

      let databaseUrl = this.databaseUrl;
      if (databaseUrl === undefined) {
        const password = randomBytes(12).toString('hex');
        const alias = `gw-database-${id}`;
        parts.database = await service('database', images.database, network, labels)
          .withNetworkAliases(alias)
          .withEnvironment({
            POSTGRES_USER: 'gateway',
            POSTGRES_PASSWORD: password,
            POSTGRES_DB: 'gateway',
          })
          .withWaitStrategy(
            Wait.forSuccessfulCommand('pg_isready -h 127.0.0.1 -U gateway -d gateway'),
          )
          .withLogConsumer(keep('database'))
          .withStartupTimeout(this.startupTimeoutMs)
          .start();
        parts.containers.push(parts.database);
        databaseUrl = `postgres://gateway:${password}@${alias}:5432/gateway`;
      }

      let gateway = service('gateway', images.gateway, network, labels)
        .withNetworkAliases(sidecarAlias)
        .withEnvironment({
          ...this.gatewayEnv,
          DATABASE_URL: databaseUrl,
          NGINX_CONTROL_SOCKET: `${CONTROL_DIR}/nginx.sock`,
          API_KEY_CREATE: 'true',
          ...(this.oidcCa === undefined ? {} : { OIDC_CA_FILE }),
        })
        .withBindMounts([
          { source: parts.volume, target: CONTROL_DIR },
          // nginx's proof for the sidecar (nginx/conf.d/sidecar-proof.key), which the proxy makes.
          { source: parts.configVolume, target: CONFIG_DIR, mode: 'ro' },
        ])
        .withWaitStrategy(probe('http://127.0.0.1:8081/healthz'))
        .withLogConsumer(keep('gateway'))
        .withStartupTimeout(this.startupTimeoutMs);
      if (this.oidcCa !== undefined) {
        gateway = gateway.withCopyContentToContainer([
          { content: this.oidcCa, target: OIDC_CA_FILE, mode: 0o644 },
        ]);
      }
      parts.gateway = await gateway.start();
      parts.containers.push(parts.gateway);

      let proxy = service('proxy', images.proxy, network, labels)
        // The sidecar's user (node) is in group 1000: it may read the proof the proxy makes.
        .withEnvironment({ GATEWAY_SETTINGS: SETTINGS_FILE, GATEWAY_PROOF_GID: '1000' })
        .withCopyContentToContainer([
          { content: resolved.settingsYaml, target: SETTINGS_FILE, mode: 0o644 },
        ])
        .withBindMounts([
          { source: parts.volume, target: CONTROL_DIR },
          { source: parts.configVolume, target: CONFIG_DIR },
        ])
        .withExposedPorts(443)
        .withWaitStrategy(probe('tls://127.0.0.1:443'))
        .withLogConsumer(keep('proxy'))
        .withStartupTimeout(this.startupTimeoutMs);
      if (this.hostAppPort !== undefined && !podman) {
        // podman names the host itself; Docker (20.10+) needs to be told.
        proxy = proxy.withExtraHosts([{ host: hostName, ipAddress: 'host-gateway' }]);
      }
      parts.proxy = await proxy.start();
      parts.containers.push(parts.proxy);

      const adminKey = await waitForKey(parts);
      const ca = await parts.proxy.exec(['cat', '/etc/config/nginx/ssl/nginx.crt']);
      if (ca.exitCode !== 0) throw new Error(`reading the certificate failed: ${ca.output}`);
      started = new StartedGatewayContainer(parts, {
        adminKey,
        caCertificate: ca.stdout,
        settings: resolved.settings,
      });
      return started;
    } catch (err) {
      const stopped = new StartedGatewayContainer(parts, {
        adminKey: '',
        caCertificate: '',
        settings: resolved.settings,
      });
      await stopped.stop().catch(() => {});
      throw notStarted(err, parts);
    }
  }
}

function service(
  name: string,
  image: string,
  network: StartedNetwork,
  labels: Record<string, string>,
): GenericContainer {
  return new GenericContainer(image)
    .withNetwork(network)
    .withLabels({ ...labels, 'gw.service': name });
}

/**
 * Ready when the image's own health probe passes, run by testcontainers itself: podman without
 * systemd schedules no HEALTHCHECK at all, and a busy engine runs them late.
 */
function probe(target: string) {
  return Wait.forSuccessfulCommand(`node /usr/local/lib/gateway/healthcheck.mjs "${target}"`);
}

/** podman's Docker-compatible API says so in its version's components. */
async function isPodman(): Promise<boolean> {
  const client = await getContainerRuntimeClient();
  const version = (await client.container.dockerode.version()) as {
    Components?: { Name?: string }[];
  };
  return (version.Components ?? []).some((c) => /podman/i.test(c.Name ?? ''));
}

/** The bootstrap key the sidecar printed (spec 5.2); it prints it before it reports healthy. */
async function waitForKey(parts: Parts): Promise<string> {
  for (let i = 0; i < 50; i++) {
    const match = KEY_LINE.exec(parts.logs.gateway ?? '');
    if (match) return match[1]!;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('the gateway printed no NEWLY GENERATED API KEY line');
}

/** The error a failed start reports: what failed, and the last lines of each service's log. */
function notStarted(err: unknown, parts: Parts): Error {
  if (err instanceof GatewayStartError) return err;
  const logs = Object.entries(parts.logs)
    .filter(([, text]) => text.trim() !== '')
    .map(([name, text]) => `--- ${name} (last lines) ---\n${tail(text, 20)}`)
    .join('\n');
  return new GatewayStartError(
    'NOT_STARTED',
    `GatewayContainer: the gateway did not start: ${(err as Error).message}${logs ? `\n${logs}` : ''}`,
  );
}
