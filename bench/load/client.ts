import { Agent, request } from 'node:https';
import { performance } from 'node:perf_hooks';

export interface Answer {
  status: number;
  text: string;
  /** performance.now() when the request was handed to the socket, and when the answer ended. */
  sentAt: number;
  endAt: number;
  ms: number;
}

/**
 * An HTTPS client with its own keep-alive connections to one gateway, as a real API caller
 * has: TLS is set up once per connection, not per measured request. It trusts only the
 * gateway's certificate (CN localhost) and connects to loopback.
 */
export class Client {
  private readonly agent: Agent;

  constructor(
    private readonly baseUrl: string,
    private readonly ca: string,
    connections = 1,
  ) {
    this.agent = new Agent({
      keepAlive: true,
      maxSockets: connections,
      ca,
      servername: 'localhost',
    });
  }

  send(
    method: string,
    path: string,
    headers: Record<string, string> = {},
    json?: unknown,
  ): Promise<Answer> {
    const body = json === undefined ? undefined : JSON.stringify(json);
    return new Promise((resolve, reject) => {
      const sentAt = performance.now();
      const req = request(
        `${this.baseUrl}${path}`,
        {
          method,
          agent: this.agent,
          ca: this.ca,
          servername: 'localhost',
          headers: {
            Host: 'localhost',
            ...(body === undefined
              ? {}
              : { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) }),
            ...headers,
          },
          timeout: 15_000,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', reject);
          res.on('end', () => {
            const endAt = performance.now();
            resolve({
              status: res.statusCode ?? 0,
              text: Buffer.concat(chunks).toString('utf8'),
              sentAt,
              endAt,
              ms: endAt - sentAt,
            });
          });
        },
      );
      req.on('timeout', () => req.destroy(new Error(`${method} ${path}: timeout`)));
      req.on('error', reject);
      req.end(body);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

/** Runs `task` over `items` with at most `concurrency` at once; results in input order. */
export async function inParallel<T, R>(
  items: readonly T[],
  concurrency: number,
  task: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items.length) }, async () => {
      while (next < items.length) {
        const i = next;
        next += 1;
        out[i] = await task(items[i]!, i);
      }
    }),
  );
  return out;
}
