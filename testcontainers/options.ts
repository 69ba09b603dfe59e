import { SettingsError } from '../generator/errors.js';
import { parseSettings, type RawSettings } from '../generator/settings.js';
import { GatewayStartError } from './errors.js';

/**
 * Settings of the gateway's nginx (`default.conf`, `ssl.conf`): the keys of
 * gateway.example.yaml, e.g. `{ auth_cache: { max_age_ms: 0 }, tls: { protocols: ['TLSv1.3'] } }`.
 */
export type GatewaySettings = RawSettings;

/** Bearer tokens (spec 5.3): the provider, and the claims that name the caller. */
export interface OidcOptions {
  /** The provider's discovery URL, as the gateway's containers reach it. */
  discovery: string;
  /** Claim matched against an API client's `api_client_id` (default `sub`). */
  clientIdClaim?: string;
  /** Claim sent to the app as `X-Client-Name` (default `sub`). */
  clientNameClaim?: string;
  /** Required `aud`; unset: not checked. */
  audience?: string;
  /** Check the provider's certificate (default true). */
  sslVerify?: boolean;
  /** PEM of the CA that issued the provider's certificate, when it is not a public one. */
  caCertificate?: string;
}

/** What the containers are given; each start computes it from the builder's options. */
export interface ResolvedOptions {
  settings: GatewaySettings;
  settingsYaml: string;
}

/** Keys GatewayContainer sets itself: the containers' wiring, not a user's choice. */
const WIRED = ['https_port', 'config_dir', 'upstreams.sidecar', 'auth_cache.control_socket'];

function has(settings: GatewaySettings, path: string): boolean {
  let at: unknown = settings;
  for (const key of path.split('.')) {
    if (typeof at !== 'object' || at === null || !(key in at)) return false;
    at = (at as Record<string, unknown>)[key];
  }
  return true;
}

/** The settings for the proxy, validated as the proxy will validate them: every problem at once. */
export function resolveSettings(
  user: GatewaySettings,
  wiring: { app: string | undefined; sidecar: string; controlSocket: string },
): ResolvedOptions {
  const problems = WIRED.filter((path) => has(user, path)).map(
    (path) => `${path}: set by GatewayContainer (the containers' wiring); leave it out`,
  );
  const userUpstreams = (user.upstreams ?? {}) as Record<string, unknown>;
  const app = wiring.app ?? (userUpstreams.app as string | undefined);
  if (app === undefined) {
    problems.push(
      'upstreams.app: no application; call withApp("name:port") for a container on the ' +
        'network, or withHostApp(port) for one listening on this machine',
    );
  }
  const settings: GatewaySettings = {
    ...user,
    https_port: 443,
    config_dir: '/etc/config',
    upstreams: { ...userUpstreams, ...(app === undefined ? {} : { app }), sidecar: wiring.sidecar },
    auth_cache: {
      ...((user.auth_cache ?? {}) as Record<string, unknown>),
      control_socket: wiring.controlSocket,
    },
  };
  try {
    parseSettings(settings, 'GatewayContainer settings');
  } catch (err) {
    if (!(err instanceof SettingsError)) throw err;
    problems.push(...err.problems);
  }
  if (problems.length > 0) {
    throw new GatewayStartError(
      'INVALID_OPTIONS',
      `GatewayContainer: invalid options, nothing started: ${problems.length === 1 ? '1 problem' : `${problems.length} problems`}\n` +
        problems.map((p) => `  - ${p}`).join('\n'),
    );
  }
  // JSON is YAML: the proxy reads it with the same loader as an operator's file.
  return { settings, settingsYaml: JSON.stringify(settings, null, 2) };
}

/** The settings an OpenID Connect option stands for. */
export function oidcSettings(oidc: OidcOptions, apiKeys: boolean | undefined): GatewaySettings {
  return {
    ...(apiKeys === undefined ? {} : { api_keys_enabled: apiKeys }),
    open_id_connect_enabled: true,
    open_id_connect: {
      discovery: oidc.discovery,
      ssl_verify: oidc.sslVerify === false ? 'no' : 'yes',
      ...(oidc.clientIdClaim === undefined ? {} : { client_id_claim: oidc.clientIdClaim }),
      ...(oidc.clientNameClaim === undefined ? {} : { client_name_claim: oidc.clientNameClaim }),
      ...(oidc.audience === undefined ? {} : { audience: oidc.audience }),
    },
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Deep merge of plain objects, later wins (as the generator layers its settings). */
export function mergeSettings(base: GatewaySettings, layer: GatewaySettings): GatewaySettings {
  const out: GatewaySettings = { ...base };
  for (const [key, value] of Object.entries(layer)) {
    const current = out[key];
    out[key] = isObject(current) && isObject(value) ? mergeSettings(current, value) : value;
  }
  return out;
}
