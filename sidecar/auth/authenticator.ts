import type { ApiKeyVerifier } from './api-key-verifier.js';
import { type AuthObserver, NO_OBSERVER } from './auth-observer.js';
import type { BearerVerifier } from './bearer-verifier.js';
import { authorizationValues, parseCredential } from './credentials.js';
import { type AuthDecision, type AuthFailure, refuse } from './decision.js';
import type { MethodToggles } from './method-toggles.js';

/** One entry point for "who is this caller?", shared by `/auth` and the management routes. */
export class Authenticator {
  constructor(
    private readonly apiKeys: ApiKeyVerifier,
    private readonly bearer: BearerVerifier | null,
    private readonly observer: AuthObserver = NO_OBSERVER,
  ) {}

  /** The decision, also told to the observer (last use, failure counts). */
  async authenticate(rawHeaders: string[], toggles: MethodToggles): Promise<AuthDecision> {
    const decision = await this.decide(rawHeaders, toggles);
    if (decision.ok) this.observer.accepted(decision.identity);
    else this.observer.refused(decision);
    return decision;
  }

  private async decide(rawHeaders: string[], toggles: MethodToggles): Promise<AuthDecision> {
    if (!toggles.apiKeys && !toggles.oidc) {
      return refuse('NO_METHOD_ENABLED', 'No authentication method is enabled on this gateway.');
    }
    const credential = parseCredential(authorizationValues(rawHeaders));
    if (!credential.ok) return credential;
    if (credential.scheme === 'apk') {
      if (!toggles.apiKeys) {
        return refuse('METHOD_DISABLED', 'API keys are disabled on this gateway.', {
          scheme: 'apk',
        });
      }
      return await this.apiKeys.verify(credential.value);
    }
    if (!toggles.oidc) {
      // Still a refused token, so it says why in X-jwt-error too.
      return refuse('METHOD_DISABLED', 'Bearer tokens are disabled on this gateway.', {
        scheme: 'bearer',
        jwtError: 'bearer tokens are disabled',
      });
    }
    if (!this.bearer) {
      return refuse('INVALID_TOKEN', 'Bearer tokens cannot be verified by this sidecar.', {
        scheme: 'bearer',
        jwtError: 'no verifier',
      });
    }
    return await this.bearer.verify(credential.value, toggles.oidcOptions);
  }
}

/** The `WWW-Authenticate` challenge for a refusal, naming only the methods that are on. */
export function challengeFor(failure: AuthFailure, toggles: MethodToggles): string {
  // A bearer token is only METHOD_DISABLED while OIDC is off, so that case ends up below.
  if (failure.scheme === 'bearer' && toggles.oidc) {
    return 'Bearer error="invalid_token"';
  }
  const schemes: string[] = [];
  if (toggles.apiKeys) schemes.push('apk');
  if (toggles.oidc) schemes.push('Bearer');
  return schemes.length > 0 ? schemes.join(', ') : 'apk';
}
