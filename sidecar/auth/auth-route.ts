import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { DECISION_FROM_SIDECAR } from '../../common/contract.js';
import {
  asciiJson,
  ForbiddenError,
  INTERNAL_ERROR_BODY,
  ServiceUnavailableError,
} from '../errors/api-error.js';
import type { Logger } from '../log.js';
import type { SidecarMetrics } from '../metrics/sidecar-metrics.js';
import type { ProofGate, ProofVerdict } from '../proof/proof-gate.js';
import { countUnproven, UNPROVEN_BODY, UNPROVEN_STATUS } from '../proof/unproven.js';
import { requestIdFields } from '../request-id.js';
import { startServerSpan, withSpan } from '../tracing/tracer.js';
import { requiresAdmin } from './admin-paths.js';
import type { Authenticator } from './authenticator.js';
import { identityHeaders, type KeyRecord, keyRecordHeaders } from './key-record.js';
import { type MethodToggles, readToggles, ToggleConfigError } from './method-toggles.js';
import { refusalError } from './refusal.js';

/**
 * The decision's span, child of nginx's (a no-op while tracing is off): the request nginx asks
 * about (method, path without the query), never a header's value or a credential.
 */
function decisionSpan(headers: IncomingHttpHeaders) {
  const span = startServerSpan('auth decision', headers);
  if (span.isRecording()) {
    const method = headers['x-original-method'];
    const uri = headers['x-original-uri'];
    if (typeof method === 'string') span.setAttribute('http.request.method', method);
    if (typeof uri === 'string') span.setAttribute('url.path', uri.split('?', 1)[0]!);
  }
  return span;
}

/**
 * Where /auth reports each answer: the metrics, a debug line with nginx's request id, and the
 * decision's span (method, outcome, status; the client id when allowed).
 */
function reporter(
  headers: IncomingHttpHeaders,
  log: Logger,
  metrics: SidecarMetrics | null,
  span: ReturnType<typeof decisionSpan>,
) {
  const started = performance.now();
  return (method: string, result: string, status: number, clientId?: string): void => {
    const seconds = (performance.now() - started) / 1000;
    metrics?.decided(method, result, seconds);
    if (span.isRecording()) {
      span.setAttributes({
        'gateway.auth.method': method,
        'gateway.auth.outcome': result,
        'http.response.status_code': status,
        ...(clientId === undefined ? {} : { 'enduser.id': clientId }),
      });
      span.end();
    }
    log.debug('auth decision', () => ({
      ...requestIdFields(headers),
      method,
      result,
      status,
      duration_ms: Math.round(seconds * 10_000) / 10,
    }));
  };
}

/** What `/auth` answers, whichever way it was asked (HTTP, or a frame: auth-frames.ts). */
export interface AuthAnswer {
  status: number;
  headers: Record<string, string>;
  /** JSON, or '' for a 204. */
  body: string;
}

/** The request headers `/auth` reads: lower-case names (as Node's `req.headers`) and raw pairs. */
export interface AuthQuestion {
  headers: IncomingHttpHeaders;
  rawHeaders: string[];
}

/**
 * `/auth`, asked by nginx's Lua code on a cache miss: the hot path. One cache look-up and one
 * SHA-256 when the client is known. Each answer is counted by method (`apk`, `bearer`, `none`)
 * and result (`allowed`, a refusal code, `forbidden`, `unavailable`, `error`).
 */
export function createAuthDecider(
  authenticator: Authenticator,
  log: Logger,
  proof: ProofGate,
  metrics: SidecarMetrics | null = null,
) {
  return async ({ headers: requestHeaders, rawHeaders }: AuthQuestion): Promise<AuthAnswer> => {
    // First of all: only nginx's questions are read. Anyone else could name its own provider
    // or switch a method on in the headers below (docs/decisions/20261202-...-only-nginx.md).
    let verdict: ProofVerdict = proof.check(requestHeaders);
    if (!verdict.ok) verdict = await proof.recheck(requestHeaders);
    if (!verdict.ok) {
      countUnproven(metrics, 'auth', verdict);
      return json(UNPROVEN_STATUS, UNPROVEN_BODY, {});
    }
    const span = decisionSpan(requestHeaders);
    const report = reporter(requestHeaders, log, metrics, span);
    let toggles: MethodToggles;
    try {
      toggles = readToggles(requestHeaders);
    } catch (err) {
      // readToggles throws nothing else today; anything else would be a bug, not a refusal.
      // Stryker disable next-line ConditionalExpression: equivalent while that holds
      if (!(err instanceof ToggleConfigError)) throw err;
      log.error('nginx forwarded an invalid toggle; refusing every request', {
        ...requestIdFields(requestHeaders),
        error: err.message,
      });
      report('none', 'error', 500);
      return json(500, asciiJson(INTERNAL_ERROR_BODY), {});
    }
    let decision: Awaited<ReturnType<Authenticator['authenticate']>>;
    try {
      // In the span's context: a key set fetched for this token is its child.
      decision = await withSpan(span, () => authenticator.authenticate(rawHeaders, toggles));
    } catch (err) {
      // Infrastructure fault (database down): fail closed with a 503 that nginx turns into 5xx.
      log.error('authentication failed on an infrastructure fault', {
        ...requestIdFields(requestHeaders),
        error: (err as Error).message,
      });
      const unavailable = new ServiceUnavailableError();
      report('none', 'unavailable', unavailable.status);
      return json(unavailable.status, asciiJson(unavailable.body()), {});
    }
    if (!decision.ok) {
      report(decision.scheme ?? 'none', decision.code, 401);
      const error = refusalError(decision, toggles);
      const record = decision.keyRecord ? keyRecordHeaders(decision.keyRecord) : {};
      return json(401, asciiJson(error.body()), { ...record, ...error.headers });
    }
    if (!decision.identity.isAdmin && requiresAdmin(requestHeaders)) {
      const forbidden = new ForbiddenError('The management API needs an admin credential.');
      report(decision.method, 'forbidden', 403);
      return json(403, asciiJson(forbidden.body()), {});
    }
    // The memo and the spread give the same headers for a known key without an end: only the
    // end's check can be told apart (a key with expires_at carries its valid-until).
    const memo = decision.validUntil === undefined ? knownKeyRecord(decision) : null;
    const headers = memo ? keyAllowedHeaders(memo, decision) : allowedHeaders(decision);
    report(decision.method, 'allowed', 204, decision.identity.clientId);
    return { status: 204, headers, body: '' };
  };
}

type Allowed = Extract<Awaited<ReturnType<Authenticator['authenticate']>>, { ok: true }>;

/** A "yes"'s headers: the key record nginx keeps, when there is one, the identity, its end. */
function allowedHeaders(decision: Allowed): Record<string, string> {
  const headers: Record<string, string> = {
    ...(decision.keyRecord ? keyRecordHeaders(decision.keyRecord) : {}),
    ...identityHeaders(decision.identity, decision.method),
    'Cache-Control': 'no-store',
  };
  if (decision.validUntil !== undefined) {
    headers[DECISION_FROM_SIDECAR.validUntil] = String(decision.validUntil);
  }
  return headers;
}

/**
 * An API key's "yes" depends on its key record alone (immutable, made once per row): its headers
 * are made once per record, not spread anew on every question (4 % of the sidecar's busy time
 * with nginx's cache off). formatAnswer only reads them.
 */
type KnownRecord = Extract<KeyRecord, { kind: 'known' }>;

/** An API key's known record, whose "yes" headers may come from the memo; null: anything else. */
function knownKeyRecord(decision: Allowed): KnownRecord | null {
  const record = decision.keyRecord;
  // Stryker disable next-line all: equivalent (the memo or the spread, the same headers)
  return record?.kind === 'known' && decision.method === 'apk' ? record : null;
}
const allowedOfRecord = new WeakMap<KnownRecord, Readonly<Record<string, string>>>();

function keyAllowedHeaders(record: KnownRecord, decision: Allowed): Record<string, string> {
  let headers = allowedOfRecord.get(record);
  // Stryker disable next-line ConditionalExpression: equivalent (made again, the same headers)
  if (!headers) {
    headers = Object.freeze(allowedHeaders(decision));
    allowedOfRecord.set(record, headers);
  }
  return headers as Record<string, string>;
}

/** `/auth` over HTTP (the control socket's path, and any HTTP client): the decider's answer. */
export function createAuthHandler(
  authenticator: Authenticator,
  log: Logger,
  proof: ProofGate,
  metrics: SidecarMetrics | null = null,
) {
  return answerOverHttp(createAuthDecider(authenticator, log, proof, metrics));
}

/** The HTTP side of a decider. */
export function answerOverHttp(decide: (question: AuthQuestion) => Promise<AuthAnswer>) {
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const answer = await decide(req);
    res.writeHead(answer.status, answer.headers);
    res.end(answer.body);
  };
}

/** A JSON answer's headers: the body's type and length, never stored by anyone. */
function json(status: number, body: string, headers: Record<string, string>): AuthAnswer {
  return {
    status,
    body,
    headers: {
      ...headers,
      'Content-Type': 'application/json',
      'Content-Length': String(Buffer.byteLength(body)),
      'Cache-Control': 'no-store',
    },
  };
}
