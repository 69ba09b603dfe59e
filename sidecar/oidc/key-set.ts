import { KeyObject } from 'node:crypto';
import { createLocalJWKSet, type JSONWebKeySet, type JWK, type JWSHeaderParameters } from 'jose';
import { inChildSpan } from '../tracing/tracer.js';
import { CachedResource, type CachePolicy } from './cached-resource.js';
import { KeyNotFoundError, ProviderError } from './errors.js';
import type { ProviderHttp } from './provider-http.js';

/** A jose resolver over one fetched key set: picks the key by `kid`, `alg`, `use`, `key_ops`. */
type KeyResolver = ReturnType<typeof createLocalJWKSet>;

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
      // A child of the decision that needed it (none in the background refresh).
      async () =>
        toResolver(
          await inChildSpan('oidc jwks fetch', jwksAttributes(jwksUri), () =>
            http.getJson(jwksUri, sslVerify, 'key set', 'jwks'),
          ),
        ),
      policy,
      onBackgroundError,
    );
  }

  /**
   * The keys that may have signed a token with `header` (its `alg`, and its `kid` if any): one,
   * or several when it names no `kid` and several fit. KeyNotFoundError when the provider has
   * none; a published key jose cannot import is a fault (thrown as jose threw it).
   */
  async keysFor(header: JWSHeaderParameters): Promise<readonly KeyObject[]> {
    const held = await candidates(await this.keys.get(), header);
    if (held !== null) return held;
    try {
      // Within the cooldown this fetches nothing, and the keys below are the cached ones.
      await this.keys.refetch();
    } catch {
      throw new KeyNotFoundError(`${noKey(header)} (refreshing the key set failed)`);
    }
    const fresh = await candidates(await this.keys.get(), header);
    if (fresh !== null) return fresh;
    throw new KeyNotFoundError(noKey(header));
  }
}

/** node:crypto's form of a key jose imported (the same object each time: node keeps it). */
const asKeyObject = (key: CryptoKey): KeyObject => KeyObject.from(key);

async function candidates(
  resolver: KeyResolver,
  header: JWSHeaderParameters,
): Promise<readonly KeyObject[] | null> {
  try {
    return [asKeyObject((await resolver(header)) as CryptoKey)];
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === 'ERR_JWKS_NO_MATCHING_KEY') return null;
    if (code !== 'ERR_JWKS_MULTIPLE_MATCHING_KEYS') throw err;
    // Several candidates (no `kid`): jose hands them over as an iterator, leaving out those
    // it cannot import.
    const keys: KeyObject[] = [];
    for await (const key of err as AsyncIterable<CryptoKey>) keys.push(asKeyObject(key));
    if (keys.length === 0) throw new Error('none of the matching published keys can be imported');
    return keys;
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

/** Where the key set is, without its query (nothing a provider put there reaches a span). */
function jwksAttributes(uri: URL): Record<string, string> {
  return { 'server.address': uri.hostname, 'url.path': uri.pathname };
}
