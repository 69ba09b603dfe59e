import { silentLogger } from '../../sidecar/log.js';
import { type RunningSidecar, startSidecar } from '../../sidecar/sidecar.js';
import { type HttpResponse, http } from './http.js';
import { STAND_IN_FOR_NGINX } from './nginx-stand-in.js';

/** Real time plus an offset a test can push forward: expiry and cache ages without sleeping. */
export class MovableClock {
  private offsetMs = 0;
  readonly now = (): number => Date.now() + this.offsetMs;

  advance(ms: number): void {
    this.offsetMs += ms;
  }
}

export interface OidcTestSidecar extends RunningSidecar {
  adminKey: string;
  clock: MovableClock;
}

/** A real sidecar (in-process, loopback, random port) with OIDC_* settings from `env`. */
export async function startOidcSidecar(
  databaseUrl: string,
  env: Record<string, string> = {},
): Promise<OidcTestSidecar> {
  const printed: string[] = [];
  const clock = new MovableClock();
  const sidecar = await startSidecar(
    { databaseUrl, listen: { host: '127.0.0.1', port: 0 } },
    {
      log: silentLogger,
      env: { API_KEY_CREATE: 'true', ...env },
      print: (line) => printed.push(line),
      clock: clock.now,
      proof: STAND_IN_FOR_NGINX,
    },
  );
  const line = printed.find((l) => l.startsWith('NEWLY GENERATED API KEY: '));
  return { ...sidecar, clock, adminKey: line?.slice('NEWLY GENERATED API KEY: '.length) ?? '' };
}

/** The OpenID Connect options as nginx forwards them (header name → value). */
export type NginxOidcHeaders = Partial<Record<string, string>>;

/**
 * The headers nginx's auth location sends for an OIDC-only gateway (spec 5.3 defaults).
 * nginx drops a header whose value is empty, so empty values are left out here too.
 */
export function nginxOidcHeaders(discoveryUrl: string, overrides: NginxOidcHeaders = {}) {
  const all: Record<string, string | undefined> = {
    'X-Gateway-Api-Keys-Enabled': 'false',
    'X-Gateway-Oidc-Enabled': 'true',
    'X-Gateway-Oidc-Discovery': discoveryUrl,
    'X-Gateway-Oidc-Ssl-Verify': 'yes',
    'X-Gateway-Oidc-Accept-Unsupported-Alg': 'false',
    'X-Gateway-Oidc-Accept-None-Alg': 'false',
    'X-Gateway-Oidc-Redirect-Uri': 'https://gateway.test/oauth2/callback',
    'X-Gateway-Oidc-Client-Id-Claim': 'sub',
    'X-Gateway-Oidc-Client-Name-Claim': 'sub',
    'X-Gateway-Oidc-Audience': '',
    'X-Original-Method': 'GET',
    'X-Original-URI': '/data',
    ...overrides,
  };
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(all)) if (value) headers[name] = value;
  return headers;
}

/** Asks the sidecar's `/auth` about `Authorization: Bearer <token>`, as nginx does. */
export function authWithBearer(
  sidecarUrl: string,
  discoveryUrl: string,
  token: string,
  overrides: NginxOidcHeaders = {},
): Promise<HttpResponse> {
  return http(`${sidecarUrl}/auth`, {
    headers: { ...nginxOidcHeaders(discoveryUrl, overrides), Authorization: `Bearer ${token}` },
  });
}
