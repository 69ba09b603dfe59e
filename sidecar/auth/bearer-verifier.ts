import type { AuthDecision } from './decision.js';
import type { OidcOptions } from './method-toggles.js';

/** Verifies `Bearer <JWT>` against an OpenID Connect provider (see sidecar/oidc/). */
export interface BearerVerifier {
  verify(token: string, options: OidcOptions): Promise<AuthDecision>;
}
