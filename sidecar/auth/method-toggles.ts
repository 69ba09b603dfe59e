import type { IncomingHttpHeaders } from 'node:http';

/** OpenID Connect options as nginx forwards them (see docs/decisions/*nginx-sidecar-contract*). */
export interface OidcOptions {
  discovery: string;
  sslVerify: boolean;
  acceptUnsupportedAlg: boolean;
  acceptNoneAlg: boolean;
  redirectUri: string;
  clientIdClaim: string;
  clientNameClaim: string;
  audience: string;
}

/** Which authentication methods nginx says are on for this request. */
export interface MethodToggles {
  apiKeys: boolean;
  oidc: boolean;
  oidcOptions: OidcOptions;
}

/** nginx sent a value the sidecar cannot interpret: a configuration fault, answered 500. */
export class ToggleConfigError extends Error {}

function flag(headers: IncomingHttpHeaders, name: string, fallback: boolean): boolean {
  const value = headers[name];
  if (value === undefined) return fallback;
  if (value === 'true') return true;
  if (value === 'false') return false;
  // Fail closed and loudly: a typo in default.conf must not silently switch a method on or off.
  throw new ToggleConfigError(`${name} must be "true" or "false", got ${JSON.stringify(value)}`);
}

function text(headers: IncomingHttpHeaders, name: string, fallback: string): string {
  const value = headers[name];
  return typeof value === 'string' && value !== '' ? value : fallback;
}

/** Reads the toggles nginx forwards; absent headers mean the spec's defaults. */
export function readToggles(headers: IncomingHttpHeaders): MethodToggles {
  const sslVerify = text(headers, 'x-gateway-oidc-ssl-verify', 'yes');
  if (sslVerify !== 'yes' && sslVerify !== 'no') {
    throw new ToggleConfigError(
      `x-gateway-oidc-ssl-verify must be "yes" or "no", got ${JSON.stringify(sslVerify)}`,
    );
  }
  return {
    apiKeys: flag(headers, 'x-gateway-api-keys-enabled', true),
    oidc: flag(headers, 'x-gateway-oidc-enabled', false),
    oidcOptions: {
      discovery: text(headers, 'x-gateway-oidc-discovery', ''),
      sslVerify: sslVerify === 'yes',
      acceptUnsupportedAlg: flag(headers, 'x-gateway-oidc-accept-unsupported-alg', false),
      acceptNoneAlg: flag(headers, 'x-gateway-oidc-accept-none-alg', false),
      redirectUri: text(headers, 'x-gateway-oidc-redirect-uri', ''),
      clientIdClaim: text(headers, 'x-gateway-oidc-client-id-claim', 'sub'),
      clientNameClaim: text(headers, 'x-gateway-oidc-client-name-claim', 'sub'),
      audience: text(headers, 'x-gateway-oidc-audience', ''),
    },
  };
}
