import { createLocalJWKSet, type JSONWebKeySet, type JWK, type JWSHeaderParameters } from 'jose';
import { CachedResource, type CachePolicy } from './cached-resource.js';
import { KeyNotFoundError, ProviderError } from './errors.js';
import type { ProviderHttp } from './provider-http.js';

/** A jose resolver over one fetched key set: picks the key by `kid`, `alg`, `use`, `key_ops`. */
export type KeyResolver = ReturnType<typeof createLocalJWKSet>;

/**
 * A provider's signature keys (`jwks_uri`), cached; an unknown `kid` triggers at most one
 * refetch per cooldown, which is how a rotated key is picked up without a restart and how a
 * stream of bogus `kid`s is kept from reaching the provider.
 */
export class ProviderKeySet {
  private readonly keys: CachedResource<KeyResolver>;

  constructor(
    http: ProviderHttp,
    readonly jwksUri: URL,
    sslVerify: boolean,
    policy: CachePolicy,
    onBackgroundError: (err: unknown) => void,
  ) {
    this.keys = new CachedResource(
      async () => toResolver(await http.getJson(jwksUri, sslVerify, 'key set', 'jwks')),
      policy,
      onBackgroundError,
    );
  }

  /** A resolver that holds a key for `header`; KeyNotFoundError when the provider has none. */
  async resolverFor(header: JWSHeaderParameters): Promise<KeyResolver> {
    const cached = await this.keys.get();
    if (await holdsKey(cached, header)) return cached;
    try {
      // Within the cooldown this fetches nothing, and the keys below are the cached ones.
      await this.keys.refetch();
    } catch {
      throw new KeyNotFoundError(`${noKey(header)} (refreshing the key set failed)`);
    }
    const fresh = await this.keys.get();
    if (await holdsKey(fresh, header)) return fresh;
    throw new KeyNotFoundError(noKey(header));
  }
}

async function holdsKey(resolver: KeyResolver, header: JWSHeaderParameters): Promise<boolean> {
  try {
    await resolver(header);
    return true;
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === 'ERR_JWKS_NO_MATCHING_KEY') return false;
    // Several candidates (no `kid`): jwtVerify tries each of them itself.
    if (code === 'ERR_JWKS_MULTIPLE_MATCHING_KEYS') return true;
    throw err;
  }
}

function noKey(header: JWSHeaderParameters): string {
  return typeof header.kid === 'string'
    ? `no key with kid ${JSON.stringify(header.kid.slice(0, 64))} at the identity provider`
    : 'no matching key at the identity provider';
}

/**
 * Keeps only public asymmetric keys: a symmetric (`oct`) or private member in a published key
 * set is a provider mistake, and must never become a way to verify a token.
 */
function toResolver(body: unknown): KeyResolver {
  const keys = (body as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(keys)) throw new ProviderError('key set failed: no "keys" list');
  // jose's key-set resolver itself never picks an `oct` key (it serves asymmetric algorithms
  // only), so the `kty` test is defence in depth that no test can observe.
  const usable = keys.filter(
    (k): k is JWK =>
      typeof k === 'object' &&
      k !== null &&
      // Stryker disable next-line ConditionalExpression,StringLiteral: equivalent, see above
      k.kty !== 'oct' &&
      !('d' in k) &&
      !('k' in k),
  );
  try {
    return createLocalJWKSet({ keys: usable } as JSONWebKeySet);
  } catch {
    throw new ProviderError('key set failed: malformed key set');
  }
}
