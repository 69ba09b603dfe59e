import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { ForbiddenError, ServiceUnavailableError } from '../errors/api-error.js';
import type { Authenticator } from './authenticator.js';
import { readToggles } from './method-toggles.js';
import { refusalError } from './refusal.js';

// The third stage every management request passes (sidecar/http/middleware.ts has the others).

/**
 * The management routes check the credential themselves, through the same authenticator as
 * `/auth` (defence in depth: nginx already asked, but the sidecar never trusts that it did).
 */
export function requireAdmin(authenticator: Authenticator): RequestHandler {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const toggles = readToggles(req.headers);
    let decision: Awaited<ReturnType<Authenticator['authenticate']>>;
    try {
      decision = await authenticator.authenticate(req.rawHeaders, toggles);
    } catch (err) {
      throw new ServiceUnavailableError(err);
    }
    if (!decision.ok) {
      throw refusalError(decision, toggles);
    }
    if (!decision.identity.isAdmin) {
      throw new ForbiddenError('The management API needs an admin credential.');
    }
    res.locals.identity = decision.identity;
    // The audit trail names how the admin authenticated (sidecar/audit/request-context.ts).
    res.locals.authMethod = decision.method;
    next();
  };
}
