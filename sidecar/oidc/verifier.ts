import type { JWTPayload } from 'jose';
import type { BearerVerifier } from '../auth/bearer-verifier.js';
import { type AuthDecision, expiredRefusal, refuse, validUntil } from '../auth/decision.js';
import type { OidcOptions } from '../auth/method-toggles.js';
import { isExpired, MAX_TEXT } from '../clients/store/api-client.js';
import type { ClientDirectory } from '../clients/store/directory.js';
import type { Clock } from '../clock.js';
import type { Logger } from '../log.js';
import type { SidecarMetrics } from '../metrics/sidecar-metrics.js';
import { algorithmRefusal } from './algorithms.js';
import { checkClaims } from './claims.js';
import { OidcError } from './errors.js';
import { readHeader, verifyJws } from './jws.js';
import { ProviderRegistry } from './provider.js';
import { ProviderHttp } from './provider-http.js';
import type { OidcSettings } from './settings.js';
import { describeTokenError } from './token-errors.js';

/** Far above any real JWT; refusing bigger ones early keeps parsing cheap. */
const MAX_TOKEN_CHARS = 16 * 1024;
/** `api_client_id` is at most MAX_TEXT characters: a longer claim cannot match, so no query. */
const MAX_API_CLIENT_ID = MAX_TEXT;

type Checked =
  | { ok: true; clientId: string; clientName: string | null; expiresAt: number }
  | { ok: false; reason: string };

/**
 * `Authorization: Bearer <JWT>`: checks the token against the provider nginx names (discovery,
 * keys, algorithm, signature, `iss`, `exp`/`nbf`/`iat`, optional `aud`), then requires an API
 * client whose `api_client_id` equals the configured claim. Every failure is a refusal with an
 * `X-jwt-error` text; only a database fault (while finding the client) escapes, as for API keys.
 */
export class OidcBearerVerifier implements BearerVerifier {
  private readonly providers: ProviderRegistry;

  constructor(
    private readonly settings: OidcSettings,
    private readonly clients: Pick<ClientDirectory, 'bySubject'>,
    private readonly log: Logger,
    private readonly now: Clock = Date.now,
    metrics: SidecarMetrics | null = null,
  ) {
    const http = new ProviderHttp(settings.extraCa, settings.httpTimeoutMs, (resource, ok) =>
      metrics?.fetched(resource, ok),
    );
    this.providers = new ProviderRegistry(
      http,
      {
        now,
        maxAgeMs: settings.cacheMaxAgeMs,
        maxStaleMs: settings.maxStaleMs,
        cooldownMs: settings.jwksCooldownMs,
      },
      log,
    );
  }

  async verify(token: string, options: OidcOptions): Promise<AuthDecision> {
    const checked = await this.checkToken(token, options);
    if (!checked.ok) {
      return refuse('INVALID_TOKEN', 'The bearer token is not valid.', {
        scheme: 'bearer',
        jwtError: checked.reason,
      });
    }
    const row =
      checked.clientId.length <= MAX_API_CLIENT_ID
        ? await this.clients.bySubject(checked.clientId)
        : null;
    if (!row) {
      return refuse('UNKNOWN_CLIENT', 'No API client matches this bearer token.', {
        scheme: 'bearer',
        jwtError: 'no API client for this token',
      });
    }
    if (isExpired(row, this.now())) return expiredRefusal(row.id, 'bearer');
    return {
      ok: true,
      method: 'bearer',
      validUntil: validUntil([checked.expiresAt * 1000, row.expiresAt?.getTime()]),
      identity: {
        id: row.id,
        clientId: checked.clientId,
        clientName: checked.clientName ?? row.name,
        isAdmin: row.isAdmin,
        rateLimit: row.rateLimit,
        permissions: row.permissions,
      },
    };
  }

  /** Never throws: whatever goes wrong while checking a token refuses it. */
  private async checkToken(token: string, options: OidcOptions): Promise<Checked> {
    try {
      return await this.check(token, options);
    } catch (err) {
      const reason = err instanceof OidcError ? err.message : describeTokenError(err);
      if (reason !== null) return { ok: false, reason };
      this.log.error('unexpected error while verifying a bearer token; refused', {
        // Nothing on this path throws null or undefined; `?.` keeps the refusal if one ever does.
        // Stryker disable next-line OptionalChaining: equivalent while that holds
        error: (err as Error)?.message,
      });
      return { ok: false, reason: 'token verification failed' };
    }
  }

  private async check(token: string, options: OidcOptions): Promise<Checked> {
    if (token.length > MAX_TOKEN_CHARS) return refused('token too large');
    if (token.split('.').length !== 3) return refused('malformed token (not a signed JWT)');
    const header = readHeader(token);
    if (header === null) return refused('malformed token (unreadable header)');
    // Before any network: `none` and HS* are refused whatever the provider says.
    const early = algorithmRefusal(header.alg, options, null);
    if (early !== null) return refused(early);
    const alg = header.alg as string;
    const discoveryUrl = this.discoveryUrl(options.discovery);
    if (!discoveryUrl) return refused('OpenID Connect discovery URL is not configured correctly');
    const provider = this.providers.get(discoveryUrl, options.sslVerify);
    const metadata = await provider.metadata();
    const unadvertised = algorithmRefusal(alg, options, metadata.signingAlgs);
    if (unadvertised !== null) return refused(unadvertised);
    const keys = await provider.keysFor(metadata, header);
    // Synchronous from here: no thread pool hop on a token's first sight (jws.ts says why).
    const signed = verifyJws(token, header, alg, keys);
    if (!signed.ok) return signed;
    const claims = checkClaims(signed.payload, {
      issuer: metadata.issuer,
      audience: options.audience !== '' ? options.audience : null,
      toleranceSeconds: this.settings.clockToleranceSeconds,
      nowMs: this.now(),
    });
    if (!claims.ok) return claims;
    return identityClaims(claims.claims, options);
  }

  private discoveryUrl(raw: string): URL | null {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      this.log.error('nginx forwarded no valid OpenID Connect discovery URL', { discovery: raw });
      return null;
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') {
      this.log.error('the OpenID Connect discovery URL must be http(s)', { discovery: raw });
      return null;
    }
    return url;
  }
}

function refused(reason: string): Checked {
  return { ok: false, reason };
}

/** Spec 5.3.4: the configured claims give client_id and client_name. */
function identityClaims(payload: JWTPayload, options: OidcOptions): Checked {
  const clientId = payload[options.clientIdClaim];
  if (typeof clientId !== 'string' || clientId === '') {
    return refused(
      `token has no string ${JSON.stringify(options.clientIdClaim.slice(0, 64))} claim`,
    );
  }
  const name = payload[options.clientNameClaim];
  // A missing display name is not a reason to refuse; the API client's own name stands in.
  return {
    ok: true,
    clientId,
    clientName: typeof name === 'string' && name !== '' ? name : null,
    // jwtVerify required a numeric exp.
    expiresAt: payload.exp as number,
  };
}
