import { createServer, type Server, type ServerResponse } from 'node:http';
import { asciiJson } from '../errors/api-error.js';
import type { Logger } from '../log.js';
import type { Readiness } from './readiness.js';
import type { SidecarMetrics } from './sidecar-metrics.js';

export interface MetricsServerParts {
  metrics: SidecarMetrics;
  /**
   * `/readyz`: the database reachable and every migration applied; a ready answer also says
   * how the rate limit store fares, with rate_limits.store redis.
   */
  readiness: () => Promise<Readiness>;
  log: Logger;
}

function send(res: ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, {
    'Content-Type': type,
    'Content-Length': Buffer.byteLength(body),
    'Cache-Control': 'no-store',
  });
  res.end(body);
}

function sendError(res: ServerResponse, status: number, code: string, message: string): void {
  send(res, status, 'application/json', asciiJson({ errors: [{ code, message }] }));
}

/**
 * The operators' listener (METRICS_LISTEN; never nginx's public port): `/metrics` in the
 * Prometheus text format, `/livez` (the process serves: 200, nothing else checked, so an
 * orchestrator never restarts a sidecar for its database's outage) and `/readyz` (200 only
 * when the sidecar can do its work; else 503 with the reason).
 */
export function createMetricsServer({ metrics, readiness, log }: MetricsServerParts): Server {
  const server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('Allow', 'GET, HEAD');
      sendError(res, 405, 'METHOD_NOT_ALLOWED', 'This method is not allowed.');
      return;
    }
    switch (path) {
      case '/livez':
        send(res, 200, 'application/json', '{"status":"live"}');
        return;
      case '/readyz':
        readiness().then((state) => {
          if (!state.ready) return sendError(res, 503, state.code, state.message);
          const store = state.rateLimitStore;
          const body = {
            status: 'ready',
            ...(state.degraded ? { degraded: [state.degraded] } : {}),
            ...(store
              ? {
                  rate_limit_store: {
                    up: store.up,
                    sync_lag_seconds: Math.round(store.syncLagSeconds * 1000) / 1000,
                    over_admitted: store.overAdmitted,
                  },
                }
              : {}),
          };
          send(res, 200, 'application/json', asciiJson(body));
        });
        return;
      case '/metrics':
        metrics.text().then(
          (text) => send(res, 200, metrics.registry.contentType, text),
          (err: unknown) => {
            log.error('cannot collect the metrics', { error: (err as Error).message });
            sendError(res, 500, 'INTERNAL_ERROR', 'The metrics could not be collected.');
          },
        );
        return;
      default:
        sendError(res, 404, 'NOT_FOUND', 'No such path: /metrics, /livez or /readyz.');
    }
  });
  server.keepAliveTimeout = 75_000;
  server.requestTimeout = 30_000;
  return server;
}
