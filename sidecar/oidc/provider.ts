import type { KeyObject } from 'node:crypto';
import type { JWSHeaderParameters } from 'jose';
import type { Logger } from '../log.js';
import { CachedResource, type CachePolicy } from './cached-resource.js';
import { discover, type ProviderMetadata } from './discovery.js';
import { ProviderKeySet } from './key-set.js';
import type { ProviderHttp } from './provider-http.js';

/** One provider as reached with one TLS setting: its discovery document and its keys. */
export class OidcProvider {
  private readonly discovery: CachedResource<ProviderMetadata>;
  private keySet: ProviderKeySet | null = null;

  constructor(
    private readonly http: ProviderHttp,
    private readonly discoveryUrl: URL,
    private readonly sslVerify: boolean,
    private readonly policy: CachePolicy,
    private readonly log: Logger,
  ) {
    this.discovery = new CachedResource(
      () => discover(http, discoveryUrl, sslVerify),
      policy,
      this.backgroundError('discovery'),
    );
  }

  /** The discovery document (cached; ProviderError when it cannot be had). */
  metadata(): Promise<ProviderMetadata> {
    return this.discovery.get();
  }

  /** The keys that may have signed a token with `header`, from the key set the document names. */
  keysFor(metadata: ProviderMetadata, header: JWSHeaderParameters): Promise<readonly KeyObject[]> {
    // A refreshed document may name another key set; the old keys no longer count then.
    if (this.keySet?.jwksUri.href !== metadata.jwksUri.href) {
      this.keySet = new ProviderKeySet(
        this.http,
        metadata.jwksUri,
        this.sslVerify,
        this.policy,
        this.backgroundError('key set'),
      );
    }
    return this.keySet.keysFor(header);
  }

  private backgroundError(what: string) {
    return (err: unknown) =>
      this.log.warn(`refreshing the OpenID Connect ${what} failed; still using the cached one`, {
        discovery: this.discoveryUrl.href,
        error: (err as Error).message,
      });
  }
}

/** Providers kept at once; nginx normally names one, so this only bounds a misconfiguration. */
const MAX_PROVIDERS = 16;

/**
 * Providers by discovery URL and TLS setting: nginx sends both with every request, and a
 * document fetched without certificate checks must never answer a request that asks for them.
 */
export class ProviderRegistry {
  private readonly providers = new Map<string, OidcProvider>();

  constructor(
    private readonly http: ProviderHttp,
    private readonly policy: CachePolicy,
    private readonly log: Logger,
  ) {}

  get(discoveryUrl: URL, sslVerify: boolean): OidcProvider {
    const key = `${sslVerify ? 'verify' : 'no-verify'} ${discoveryUrl.href}`;
    let provider = this.providers.get(key);
    if (provider) {
      // Re-insert: Map order is then least recently used first, for eviction.
      this.providers.delete(key);
    } else {
      provider = new OidcProvider(this.http, discoveryUrl, sslVerify, this.policy, this.log);
      if (this.providers.size >= MAX_PROVIDERS) {
        const oldest = this.providers.keys().next();
        if (!oldest.done) this.providers.delete(oldest.value);
      }
    }
    this.providers.set(key, provider);
    return provider;
  }
}
