import { Agent as HttpAgent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';

/** TLS settings for an HTTPS base URL, e.g. the gateway's self-signed CA. */
export interface TlsOptions {
  /** Certificates to trust instead of the system's, PEM. */
  ca?: string | Buffer | Array<string | Buffer>;
  /** Client certificate and key, PEM, for mutual TLS. */
  cert?: string | Buffer;
  key?: string | Buffer;
  /** Default true; false accepts any certificate (for experiments only). */
  rejectUnauthorized?: boolean;
  /** Name to check the certificate against when it differs from the URL's host. */
  servername?: string;
}

export interface HttpAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

// Anything larger than this is not an engine result; stop reading rather than fill memory.
const MAX_ANSWER_BYTES = 16 * 1024 * 1024;

/** One HTTP(S) connection pool for one base URL. */
export class Transport {
  private readonly agent: HttpAgent;

  constructor(
    private readonly https: boolean,
    tls: TlsOptions,
    private readonly timeoutMs: number,
  ) {
    this.agent = https
      ? new HttpsAgent({ keepAlive: true, ...tls })
      : new HttpAgent({ keepAlive: true });
  }

  /** Sends one request and reads the whole answer. */
  send(
    url: URL,
    method: string,
    headers: Record<string, string>,
    body?: string,
  ): Promise<HttpAnswer> {
    const request = this.https ? httpsRequest : httpRequest;
    return new Promise((resolve, reject) => {
      const req = request(url, { method, headers, agent: this.agent }, (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_ANSWER_BYTES) {
            res.destroy(new Error(`answer larger than ${MAX_ANSWER_BYTES} bytes`));
            return;
          }
          chunks.push(chunk);
        });
        res.on('error', reject);
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
      });
      req.setTimeout(this.timeoutMs, () => {
        req.destroy(new Error(`no answer from ${url.origin} within ${this.timeoutMs} ms`));
      });
      req.on('error', reject);
      req.end(body);
    });
  }

  /** Closes pooled connections. */
  close(): void {
    this.agent.destroy();
  }
}
