/** The four roles of a gateway deployment, named as in docker-compose.yml. */
export type Service = 'proxy' | 'gateway' | 'app' | 'database';

export interface StackTls {
  /** PEM of the certificate the proxy serves (self-signed: it is its own CA). */
  ca: string;
  servername: string;
}

/**
 * A running gateway, however it was started: native processes or containers. The end-to-end
 * suite is written once against this and runs against both.
 */
export interface Stack {
  readonly kind: 'native' | 'containers';
  /** `https://<fqdn>:<port>` as callers use it (resolved to loopback). */
  readonly baseUrl: string;
  readonly fqdn: string;
  /** The bootstrap admin key printed on first start. */
  readonly adminKey: string;
  /** After DELETE answered through this stack, how long nginx may still pass the key (ms): 0, as revocation is pushed. */
  readonly revocationBoundMs: number;
  /** Host path of the configuration directory the proxy reads (`/etc/config` in the container). */
  readonly configDir: string;
  /** TLS options trusting the certificate currently in the configuration directory. */
  tls(): Promise<StackTls>;
  /** Stops every role and starts them again; `env` changes the gateway's environment (e.g. API_KEY_CREATE). */
  restart(env?: Record<string, string>): Promise<void>;
  /** Everything a role has logged since the stack was created. */
  logs(service: Service): Promise<string>;
  /** Stops one role, leaving the others running. */
  stopService(service: Service): Promise<void>;
  close(): Promise<void>;
}
