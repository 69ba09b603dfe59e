import { isIP } from 'node:net';
import type { Request, Response } from 'express';
import type { AuthScheme } from '../auth/decision.js';
import type { Identity } from '../clients/store/api-client.js';
import { requestIdOf } from '../request-id.js';
import type { AuditActor, AuditEventInput } from './audit-log.js';

/** What an audit event says about the request that caused it, besides the action. */
export type RequestContext = Pick<AuditEventInput, 'actor' | 'requestId' | 'sourceAddress'>;

/**
 * The admin that requireAdmin authenticated (res.locals), the request id nginx generated
 * (`X-Request-Id`, null unless it has nginx's shape: the one reader in request-id.ts) and the caller's address (nginx sets
 * `X-Forwarded-For` to $remote_addr, replacing the caller's own: the peer, or behind a trusted
 * balancer the caller its X-Forwarded-For names; without the header, the peer).
 */
export function requestContext(req: Request, res: Response): RequestContext {
  const identity = res.locals.identity as Identity;
  const method = res.locals.authMethod as AuthScheme;
  const actor: AuditActor = {
    apiKeyId: identity.id,
    name: identity.clientName,
    authMethod: method === 'bearer' ? 'bearer' : 'api_key',
  };
  return {
    actor,
    requestId: requestIdOf(req.headers) ?? null,
    sourceAddress: sourceAddress(req),
  };
}

function sourceAddress(req: Request): string | null {
  const forwarded = req.headers['x-forwarded-for'];
  if (typeof forwarded === 'string') {
    const last = forwarded.split(',').at(-1)!.trim();
    return isIP(last) ? last : null;
  }
  const peer = req.socket.remoteAddress;
  return peer && isIP(peer) ? peer : null;
}
