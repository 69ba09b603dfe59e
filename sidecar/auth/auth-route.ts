import type { IncomingMessage, ServerResponse } from 'node:http';
import { DECISION_FROM_SIDECAR } from '../../common/contract.js';
import {
  asciiJson,
  ForbiddenError,
  INTERNAL_ERROR_BODY,
  ServiceUnavailableError,
} from '../errors/api-error.js';
import type { Logger } from '../log.js';
import type { SidecarMetrics } from '../metrics/sidecar-metrics.js';
import { requestIdFields } from '../request-id.js';
import { requiresAdmin } from './admin-paths.js';
import type { Authenticator } from './authenticator.js';
import type { AuthFailure } from './decision.js';
import { identityHeaders, keyRecordHeaders } from './key-record.js';
import { type MethodToggles, readToggles, ToggleConfigError } from './method-toggles.js';
import { refusalError } from './refusal.js';

/** Where /auth reports each answer: the metrics, and a debug line with nginx's request id. */
function reporter(req: IncomingMessage, log: Logger, metrics: SidecarMetrics | null) {
  const started = performance.now();
  return (method: string, result: string, status: number): void => {
    const seconds = (performance.now() - started) / 1000;
    metrics?.decided(method, result, seconds);
    log.debug('auth decision', {
      ...requestIdFields(req.headers),
      method,
      result,
      status,
      duration_ms: Math.round(seconds * 10_000) / 10,
    });
  };
}

/**
 * `/auth`, asked by nginx's Lua code on a cache miss: the hot path. Plain node:http, no
 * framework, one cache look-up and one SHA-256 when the client is known. Each answer is
 * counted by method (`apk`, `bearer`, `none`) and result (`allowed`, a refusal code,
 * `forbidden`, `unavailable`, `error`).
 */
export function createAuthHandler(
  authenticator: Authenticator,
  log: Logger,
  metrics: SidecarMetrics | null = null,
) {
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const report = reporter(req, log, metrics);
    let toggles: MethodToggles;
    try {
      toggles = readToggles(req.headers);
    } catch (err) {
      // readToggles throws nothing else today; anything else would be a bug, not a refusal.
      // Stryker disable next-line ConditionalExpression: equivalent while that holds
      if (!(err instanceof ToggleConfigError)) throw err;
      log.error('nginx forwarded an invalid toggle; refusing every request', {
        ...requestIdFields(req.headers),
        error: err.message,
      });
      sendJson(res, 500, asciiJson(INTERNAL_ERROR_BODY), {});
      report('none', 'error', 500);
      return;
    }
    let decision: Awaited<ReturnType<Authenticator['authenticate']>>;
    try {
      decision = await authenticator.authenticate(req.rawHeaders, toggles);
    } catch (err) {
      // Infrastructure fault (database down): fail closed with a 503 that nginx turns into 5xx.
      log.error('authentication failed on an infrastructure fault', {
        ...requestIdFields(req.headers),
        error: (err as Error).message,
      });
      const unavailable = new ServiceUnavailableError();
      sendJson(res, unavailable.status, asciiJson(unavailable.body()), {});
      report('none', 'unavailable', unavailable.status);
      return;
    }
    if (!decision.ok) {
      sendRefusal(
        res,
        decision,
        toggles,
        decision.keyRecord ? keyRecordHeaders(decision.keyRecord) : {},
      );
      report(decision.scheme ?? 'none', decision.code, 401);
      return;
    }
    if (!decision.identity.isAdmin && requiresAdmin(req.headers)) {
      const forbidden = new ForbiddenError('The management API needs an admin credential.');
      sendJson(res, 403, asciiJson(forbidden.body()), {});
      report(decision.method, 'forbidden', 403);
      return;
    }
    const headers: Record<string, string> = {
      ...(decision.keyRecord ? keyRecordHeaders(decision.keyRecord) : {}),
      ...identityHeaders(decision.identity, decision.method),
      'Cache-Control': 'no-store',
    };
    if (decision.validUntil !== undefined) {
      headers[DECISION_FROM_SIDECAR.validUntil] = String(decision.validUntil);
    }
    res.writeHead(204, headers);
    res.end();
    report(decision.method, 'allowed', 204);
  };
}

function sendRefusal(
  res: ServerResponse,
  failure: AuthFailure,
  toggles: MethodToggles,
  record: Record<string, string>,
): void {
  const error = refusalError(failure, toggles);
  sendJson(res, 401, asciiJson(error.body()), { ...record, ...error.headers });
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: string,
  headers: Record<string, string>,
): void {
  res.writeHead(status, {
    ...headers,
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(body),
    'Cache-Control': 'no-store',
  });
  res.end(body);
}
