import { request } from 'node:https';
import {
  getContainerRuntimeClient,
  type StartedNetwork,
  type StartedTestContainer,
} from 'testcontainers';
import {
  type CreateClientOptions,
  expectStatus,
  type GatewayClient,
  managementCall,
} from './management.js';
import type { GatewaySettings } from './options.js';

/** What a start made, so that stop (or a failed start) removes exactly that. */
export interface Parts {
  containers: StartedTestContainer[];
  proxy?: StartedTestContainer;
  gateway?: StartedTestContainer;
  database?: StartedTestContainer;
  ownNetwork?: StartedNetwork;
  /** nginx's control socket, shared by the proxy and the sidecar. */
  volume: string;
  /** The configuration directory (/etc/config): the proxy's, read by the sidecar for the proof. */
  configVolume: string;
  /** Each service's output since it started. */
  logs: Record<string, string>;
}

export interface GatewayResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export interface GatewayRequestOptions {
  method?: string;
  /** An API key: sent as `Authorization: apk <key>`. */
  key?: string;
  /** Any other header, e.g. `{ Authorization: 'Bearer <token>' }`. */
  headers?: Record<string, string>;
  body?: string;
}

let clientCount = 0;

/** A running gateway: its URL, the certificate to trust, the admin key, and client helpers. */
export class StartedGatewayContainer {
  constructor(
    private readonly parts: Parts,
    private readonly facts: { adminKey: string; caCertificate: string; settings: GatewaySettings },
  ) {}

  /**
   * `https://localhost:<port>`: the certificate is made for `localhost` (CN and SAN), so
   * name checks pass with the CA below.
   */
  getBaseUrl(): string {
    const host = this.parts.proxy!.getHost();
    const local = ['localhost', '127.0.0.1', '::1'].includes(host);
    return `https://${local ? 'localhost' : host}:${this.parts.proxy!.getMappedPort(443)}`;
  }

  /** The gateway's self-signed certificate (PEM): pass it as `ca` to trust exactly this gateway. */
  getCaCertificate(): string {
    return this.facts.caCertificate;
  }

  /** The bootstrap admin key (`API_KEY_CREATE=true`, spec 5.2). */
  getAdminKey(): string {
    return this.facts.adminKey;
  }

  /** The settings the proxy was started with (yours plus the containers' wiring). */
  getSettings(): GatewaySettings {
    return this.facts.settings;
  }

  /** The proxy's container (nginx), for exec, logs or inspection. */
  getProxyContainer(): StartedTestContainer {
    return this.parts.proxy!;
  }

  /** The sidecar's container. */
  getGatewayContainer(): StartedTestContainer {
    return this.parts.gateway!;
  }

  /** Everything a service has written so far: `proxy`, `gateway` or `database`. */
  logs(service: 'proxy' | 'gateway' | 'database'): string {
    return this.parts.logs[service] ?? '';
  }

  /** Creates an API client with its own key through the management API. */
  async createClient(options: CreateClientOptions = {}): Promise<GatewayClient> {
    const name = options.name ?? `test-client-${process.pid}-${++clientCount}`;
    const isAdmin = options.isAdmin ?? false;
    const answer = await this.management('POST', '/v1/management/api-clients', {
      name,
      is_admin: isAdmin,
      generate_api_key: true,
    });
    expectStatus(answer, 201, 'creating an API client');
    const body = answer.body as { api_client_entity_id: number; token: string };
    return { id: body.api_client_entity_id, name, isAdmin, key: body.token };
  }

  /** Deletes a client: its key is refused from the moment this resolves. */
  async revokeClient(client: GatewayClient | number): Promise<void> {
    const id = typeof client === 'number' ? client : client.id;
    const answer = await this.management('DELETE', `/v1/management/api-clients/${id}`);
    expectStatus(answer, 200, `deleting API client ${id}`);
  }

  /** One HTTPS request through the gateway, trusting its certificate. */
  request(path: string, options: GatewayRequestOptions = {}): Promise<GatewayResponse> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.key !== undefined) headers.Authorization = `apk ${options.key}`;
    return new Promise((resolve, reject) => {
      const req = request(
        new URL(path, this.getBaseUrl()),
        { method: options.method ?? 'GET', headers, ca: this.facts.caCertificate },
        (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            body += chunk;
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
        },
      );
      req.on('error', reject);
      req.end(options.body);
    });
  }

  /** Stops and removes every container, the volumes and the network this gateway made. */
  async stop(): Promise<void> {
    for (const container of [...this.parts.containers].reverse()) {
      await container.stop({ timeout: 5_000 }).catch(() => {});
    }
    const client = await getContainerRuntimeClient();
    for (const volume of [this.parts.volume, this.parts.configVolume]) {
      await client.container.dockerode
        .getVolume(volume)
        .remove()
        .catch(() => {});
    }
    await this.parts.ownNetwork?.stop().catch(() => {});
  }

  private management(method: string, path: string, body?: unknown) {
    return managementCall(
      this.getBaseUrl(),
      this.facts.caCertificate,
      this.facts.adminKey,
      method,
      path,
      body,
    );
  }
}
