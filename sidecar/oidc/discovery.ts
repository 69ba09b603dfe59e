import { ProviderError } from './errors.js';
import type { ProviderHttp } from './provider-http.js';

/** What the verifier needs from a provider's discovery document. */
export interface ProviderMetadata {
  /** Tokens must carry exactly this `iss`. */
  issuer: string;
  jwksUri: URL;
  /** `id_token_signing_alg_values_supported`: the algorithms the provider says it signs with. */
  signingAlgs: readonly string[];
}

/** Fetches and checks `discoveryUrl` (OpenID Connect Discovery 1.0, section 3). */
export async function discover(
  http: ProviderHttp,
  discoveryUrl: URL,
  sslVerify: boolean,
): Promise<ProviderMetadata> {
  const doc = await http.getJson(discoveryUrl, sslVerify, 'OpenID Connect discovery', 'discovery');
  return parseMetadata(doc, discoveryUrl);
}

function parseMetadata(doc: unknown, discoveryUrl: URL): ProviderMetadata {
  const invalid = (why: string) => new ProviderError(`OpenID Connect discovery failed: ${why}`);
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) {
    throw invalid('document is not a JSON object');
  }
  const fields = doc as Record<string, unknown>;
  const issuer = fields.issuer;
  if (typeof issuer !== 'string' || issuer === '') throw invalid('no "issuer"');
  let jwksUri: URL;
  try {
    jwksUri = new URL(String(fields.jwks_uri));
  } catch {
    throw invalid('no valid "jwks_uri"');
  }
  if (jwksUri.protocol !== 'https:' && jwksUri.protocol !== 'http:') {
    throw invalid('"jwks_uri" is not an http(s) URL');
  }
  // A provider found over TLS must not send the keys over plain HTTP, where anyone on the
  // path could substitute their own.
  if (discoveryUrl.protocol === 'https:' && jwksUri.protocol !== 'https:') {
    throw invalid('"jwks_uri" must use https');
  }
  const algs = fields.id_token_signing_alg_values_supported;
  let signingAlgs: string[];
  if (algs === undefined) {
    // The field is required by Discovery 1.0, which also requires RS256 to be among them.
    signingAlgs = ['RS256'];
  } else if (Array.isArray(algs) && algs.every((a) => typeof a === 'string')) {
    signingAlgs = algs;
  } else {
    throw invalid('"id_token_signing_alg_values_supported" is not a list of strings');
  }
  return { issuer, jwksUri, signingAlgs };
}
