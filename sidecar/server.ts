import { createServer, type Server, type ServerResponse } from 'node:http';
import type pg from 'pg';
import { SIDECAR_PROBE } from '../common/contract.js';
import { TransactionalChanges } from './audit/audited-change.js';
import { ApiKeyVerifier } from './auth/api-key-verifier.js';
import { type AuthObserver, NO_OBSERVER } from './auth/auth-observer.js';
import { answerOverHttp, createAuthDecider } from './auth/auth-route.js';
import { Authenticator } from './auth/authenticator.js';
import type { BearerVerifier } from './auth/bearer-verifier.js';
import type { RecordStreams } from './clients/listing/thread.js';
import { ClientDirectory, type HeldClients } from './clients/store/directory.js';
import { ClientReads } from './clients/store/reads.js';
import { ClientStore } from './clients/store/writes.js';
import type { Clock } from './clock.js';
import { asciiJson, INTERNAL_ERROR_BODY } from './errors/api-error.js';
import { acceptAuthFrames } from './frames/frame-listener.js';
import { SIDECAR_INSTANCE } from './instance.js';
import type { Logger } from './log.js';
import { createManagementApp } from './management/app.js';
import type { SidecarMetrics } from './metrics/sidecar-metrics.js';
import { type DecisionInvalidator, NO_INVALIDATOR } from './nginx/invalidator.js';
import type { ProofGate } from './proof/proof-gate.js';
import { countUnproven, refuseUnproven } from './proof/unproven.js';
import { SettingsStore } from './settings/settings-store.js';

export interface SidecarParts {
  /** Authentication's connections (and /healthz). */
  pool: pg.Pool;
  /**
   * Management's own connections: however many lists, creates or slow callers management has
   * going, none of them holds a connection `/auth` is waiting for. Default: `pool`.
   */
  managementPool?: pg.Pool;
  log: Logger;
  /**
   * Whether a request came from the gateway's nginx: asked before `/auth` and management read
   * anything (docs/decisions/20261202-sidecar-trusts-only-nginx.md).
   */
  proof: ProofGate;
  /** This sidecar's nginx, told at once about changes this sidecar makes. */
  invalidator?: DecisionInvalidator;
  /** Builds the bearer-token verifier over the same client directory as API keys. */
  bearer?: ((clients: ClientDirectory) => BearerVerifier) | null;
  /** Told of every decision: last use, failure counts. */
  observer?: AuthObserver;
  /** Time for expiry, grace periods and validation; tests move it instead of sleeping. */
  clock?: Clock;
  /** Where /auth counts its decisions; none: not counted. */
  metrics?: SidecarMetrics | null;
  /** Where whole listings are read; default: management's store, on the main thread. */
  listings?: RecordStreams;
  /** Bearer clients' rows held beside nginx's key table (the replicator); none: PostgreSQL. */
  heldClients?: HeldClients | null;
}

/** The sidecar's HTTP server: `/auth` on plain node:http, the rest through Express. */
export function createSidecarServer({
  pool,
  managementPool = pool,
  log,
  proof,
  invalidator = NO_INVALIDATOR,
  bearer = null,
  observer = NO_OBSERVER,
  clock = Date.now,
  metrics = null,
  listings,
  heldClients = null,
}: SidecarParts): Server {
  const directory = new ClientDirectory(new ClientReads(pool), heldClients);
  const authenticator = new Authenticator(
    new ApiKeyVerifier(directory, clock),
    bearer?.(directory) ?? null,
    observer,
  );
  const decide = createAuthDecider(authenticator, log, proof, metrics);
  const auth = answerOverHttp(decide);
  const management = createManagementApp({
    store: new ClientStore(managementPool),
    authenticator,
    invalidator,
    log,
    changes: new TransactionalChanges(managementPool),
    auditDb: managementPool,
    settings: new SettingsStore(managementPool),
    clock,
    ...(listings ? { listings } : {}),
  });

  // nginx accepts up to 4 × 8 KB of request headers and forwards them on /auth: accept as
  // much here, so a large but valid request is never "auth unavailable".
  const server = createServer({ maxHeaderSize: 64 * 1024 }, (req, res) => {
    const url = req.url ?? '';
    if (url === '/auth' || url.startsWith('/auth?')) {
      auth(req, res).catch((err: unknown) => {
        log.error('unexpected error in /auth', { error: (err as Error).message });
        if (!res.headersSent) sendJson(res, 500, asciiJson(INTERNAL_ERROR_BODY));
        else res.destroy();
      });
      return;
    }
    if (url === SIDECAR_PROBE.path) {
      sendJson(res, 200, JSON.stringify({ instance: SIDECAR_INSTANCE }));
      return;
    }
    if (url === '/healthz') {
      pool.query('SELECT 1').then(
        () => sendJson(res, 200, '{"status":"ok"}'),
        () => sendJson(res, 503, '{"status":"database unreachable"}'),
      );
      return;
    }
    // Management reads nginx's settings headers too (and re-checks the credential itself): only
    // nginx's requests get that far. /healthz and the probe above read nothing of a request.
    const verdict = proof.check(req.headers);
    if (verdict.ok) {
      management(req, res);
      return;
    }
    proof.recheck(req.headers).then(
      (again) => {
        if (again.ok) management(req, res);
        else {
          countUnproven(metrics, 'management', again);
          refuseUnproven(res);
        }
      },
      (err: unknown) => {
        log.error('unexpected error in the proof check', { error: (err as Error).message });
        if (!res.headersSent) sendJson(res, 500, asciiJson(INTERNAL_ERROR_BODY));
      },
    );
  });
  // nginx's Lua code asks /auth in auth frames on this same socket, without HTTP on either side.
  acceptAuthFrames(server, decide, log, () => metrics?.authFrameConnections.inc());
  // Node's parser refuses what it cannot read (an unknown method, raw bytes in the path)
  // before any handler runs: answer that in the one error shape too, never an empty reply.
  server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
    if (!socket.writable || (err as { code?: string }).code === 'ECONNRESET') {
      socket.destroy();
      return;
    }
    const tooLarge = err.code === 'HPE_HEADER_OVERFLOW';
    const body = asciiJson({
      errors: [
        tooLarge
          ? { code: 'HEADERS_TOO_LARGE', message: 'The request headers are too large.' }
          : { code: 'BAD_REQUEST', message: 'The request is malformed.' },
      ],
    });
    socket.end(
      `HTTP/1.1 ${tooLarge ? '431 Request Header Fields Too Large' : '400 Bad Request'}\r\n` +
        'Content-Type: application/json\r\nCache-Control: no-store\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
  // nginx keeps upstream connections open for up to 60 s; closing them first from this side
  // would race with nginx reusing them and surface as 502s.
  server.keepAliveTimeout = 75_000;
  server.headersTimeout = 76_000;
  server.requestTimeout = 30_000;
  return server;
}

/** A JSON answer of the sidecar's own (health, an unexpected fault), never stored. */
function sendJson(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, {
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(body),
    'Cache-Control': 'no-store',
  });
  res.end(body);
}
