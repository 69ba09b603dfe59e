import { request } from 'node:http';
import { CONTROL } from '../../common/contract.js';
import type { Logger } from '../log.js';
import { readControlSocket } from './control-socket.js';
import { type NginxFailureCount, type NginxFailureSource, parseFailureCounts } from './failures.js';
import type { DecisionInvalidator } from './invalidator.js';
import { parseUsageCounts, type UsageCount, type UsageSource } from './usage-counts.js';

/** Counts the invalidations nginx did not take (the sidecar's metrics' revocationFailures). */
export interface RevocationFailures {
  inc(labels: { scope: 'clients' | 'all' }): void;
}

const TIMEOUT_MS = 2_000;
/**
 * nginx subtracts the counts it hands over, so an answer cut short would lose them: the cap is
 * as large as the shared dict that holds them (gateway_budgets, 10 MB) could ever render.
 */
const FAILURES_MAX_BODY = 32 * 1024 * 1024;

/**
 * nginx's control endpoint on a unix socket (never the public port). A failure is logged and
 * reported, never thrown: the change is committed already, and the decisions' lifetime bounds
 * how long nginx can go on using them.
 */
export class NginxControl implements DecisionInvalidator, NginxFailureSource, UsageSource {
  constructor(
    private readonly socketPath: string,
    private readonly log: Logger,
    private readonly failures: RevocationFailures | null = null,
  ) {}

  async clients(ids: readonly number[]): Promise<boolean> {
    if (ids.length === 0) return true;
    return this.counted('clients', await this.post(CONTROL.invalidate, ids.join(',')));
  }

  async all(): Promise<boolean> {
    return this.counted('all', await this.post(CONTROL.invalidateAll, ''));
  }

  async created(ids: readonly number[]): Promise<boolean> {
    if (ids.length === 0) return true;
    const outcome = await this.post(CONTROL.created, ids.join(','), [404]);
    // A configuration rendered before this endpoint existed (an upgrade under way): the
    // stronger invalidation, as before, which also ends the unknown ids.
    if (outcome === 404) return this.clients(ids);
    return this.counted('clients', outcome === true);
  }

  drainFailures(): Promise<NginxFailureCount[]> {
    return this.drain(CONTROL.failures, 'failure counts', (text) => {
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        this.log.error('nginx answered its failure counts with something that is not JSON');
        return [];
      }
      return parseFailureCounts(json);
    });
  }

  /** Like the failure counts: nginx deletes what it hands over, so the cap is the dict's size. */
  drainUsage(): Promise<UsageCount[]> {
    return this.drain(CONTROL.usage, 'request counts', parseUsageCounts);
  }

  /**
   * Counts nginx hands over and forgets (POST). None when nginx is not running; any other
   * failure is logged and the counts are asked for again at the next flush.
   */
  private async drain<T>(path: string, what: string, parse: (text: string) => T[]): Promise<T[]> {
    const answer = await readControlSocket(
      this.socketPath,
      path,
      'POST',
      TIMEOUT_MS,
      FAILURES_MAX_BODY,
    );
    if (answer === null) return [];
    if (answer.status !== 200) {
      this.log.error(`nginx refused to give its ${what}`, { status: answer.status });
      return [];
    }
    return parse(answer.text);
  }

  private counted(scope: 'clients' | 'all', ok: boolean): boolean {
    if (!ok) this.failures?.inc({ scope });
    return ok;
  }

  /**
   * True once nginx answered 204, false on any failure (logged); a status in `expected` is
   * returned as such, unlogged, for the caller to handle.
   */
  private post(path: string, body: string): Promise<boolean>;
  private post(path: string, body: string, expected: number[]): Promise<boolean | number>;
  private post(path: string, body: string, expected: number[] = []): Promise<boolean | number> {
    return new Promise((resolve) => {
      const req = request(
        {
          socketPath: this.socketPath,
          path,
          method: 'POST',
          headers: { 'Content-Type': 'text/plain', 'Content-Length': Buffer.byteLength(body) },
          timeout: TIMEOUT_MS,
        },
        (res) => {
          res.resume();
          const status = res.statusCode ?? 0;
          if (expected.includes(status)) {
            resolve(status);
            return;
          }
          const ok = status === 204;
          if (!ok) this.log.error('nginx refused an invalidation', { path, status });
          resolve(ok);
        },
      );
      req.on('timeout', () => req.destroy(new Error(`no answer within ${TIMEOUT_MS} ms`)));
      req.on('error', (err: NodeJS.ErrnoException) => {
        // No socket, or nobody behind it: nginx is not running, so it holds no decisions (its
        // shared memory does not outlive it). Nothing to invalidate.
        if (err.code === 'ENOENT' || err.code === 'ECONNREFUSED') {
          this.log.info('nginx is not running; no decisions to invalidate', { path });
          resolve(true);
          return;
        }
        this.log.error('cannot reach nginx to invalidate decisions', {
          path,
          socket: this.socketPath,
          error: err.message,
        });
        resolve(false);
      });
      req.end(body);
    });
  }
}
