import { Agent, request } from 'node:https';

/** What a steady load saw: every answer by status, every request that got none, and why. */
export interface LoadTally {
  requests: number;
  byStatus: Record<number, number>;
  /** Requests without an answer (connection reset, refused, timed out), by error message. */
  errors: Record<string, number>;
  /** Non-200 answers whose body was not the gateway's one JSON error shape. */
  notJson: number;
  slowestMs: number;
}

export interface SteadyLoadOptions {
  url: string;
  headers: Record<string, string>;
  ca: string;
  servername: string;
  /** Requests in flight at once, each on its own kept-alive connection. */
  concurrency: number;
  /** A request without an answer after this long counts as hung (an error). */
  timeoutMs?: number;
}

export interface SteadyLoad {
  tally: LoadTally;
  /** Stops sending, waits for the requests in flight, and returns the tally. */
  stop(): Promise<LoadTally>;
}

/**
 * Callers that keep sending: `concurrency` loops, each sending the next request as soon as
 * the last is answered, through keep-alive connections (as real clients do). Nothing is
 * retried: every failure a caller would see is counted.
 */
export function steadyLoad(options: SteadyLoadOptions): SteadyLoad {
  const agent = new Agent({ keepAlive: true, maxSockets: options.concurrency });
  const tally: LoadTally = { requests: 0, byStatus: {}, errors: {}, notJson: 0, slowestMs: 0 };
  let running = true;
  const once = () =>
    new Promise<void>((resolve) => {
      const started = performance.now();
      const done = () => {
        tally.requests += 1;
        tally.slowestMs = Math.max(tally.slowestMs, performance.now() - started);
        resolve();
      };
      const req = request(
        options.url,
        {
          agent,
          headers: options.headers,
          ca: options.ca,
          servername: options.servername,
          timeout: options.timeoutMs ?? 10_000,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', (err) => {
            tally.errors[err.message] = (tally.errors[err.message] ?? 0) + 1;
            done();
          });
          res.on('end', () => {
            const status = res.statusCode ?? 0;
            tally.byStatus[status] = (tally.byStatus[status] ?? 0) + 1;
            if (status !== 200 && !isErrorShape(Buffer.concat(chunks).toString('utf8')))
              tally.notJson += 1;
            done();
          });
        },
      );
      req.on('timeout', () => req.destroy(new Error('no answer in time (hung)')));
      req.on('error', (err) => {
        tally.errors[err.message] = (tally.errors[err.message] ?? 0) + 1;
        done();
      });
      req.end();
    });
  const loops = Array.from({ length: options.concurrency }, async () => {
    while (running) await once();
  });
  return {
    tally,
    async stop() {
      running = false;
      await Promise.all(loops);
      agent.destroy();
      return tally;
    },
  };
}

/** Requests of a tally that did not get a 200. */
export function failures(tally: LoadTally): number {
  return tally.requests - (tally.byStatus[200] ?? 0);
}

function isErrorShape(text: string): boolean {
  try {
    const body = JSON.parse(text) as { errors?: Array<{ code?: unknown }> };
    return Array.isArray(body.errors) && typeof body.errors[0]?.code === 'string';
  } catch {
    return false;
  }
}
