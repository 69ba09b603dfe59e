import { ApiError } from '../errors/api-error.js';
import { challengeFor } from './authenticator.js';
import type { AuthFailure } from './decision.js';
import type { MethodToggles } from './method-toggles.js';

/**
 * A refused credential as an error, with the same challenge and `X-jwt-error` wherever it is
 * answered: by `/auth` to nginx, or by a management route itself.
 */
export function refusalError(failure: AuthFailure, toggles: MethodToggles): ApiError {
  const headers: Record<string, string> = { 'WWW-Authenticate': challengeFor(failure, toggles) };
  if (failure.jwtError !== undefined) headers['X-jwt-error'] = headerSafe(failure.jwtError);
  return new ApiError(401, [{ code: failure.code, message: failure.message }], headers);
}

/** Header values must be visible ASCII; anything else from a library message is replaced. */
function headerSafe(text: string): string {
  return text.replace(/[^\x20-\x7e]/g, '?').slice(0, 500);
}
