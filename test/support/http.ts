import { type Agent, request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';

export interface HttpResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  json: unknown;
}

export interface HttpOptions {
  method?: string;
  /** An object, or a flat [name, value, name, value] list to send repeated headers. */
  headers?: Record<string, string> | string[];
  body?: string | Buffer;
  /** JSON body; sets Content-Type: application/json. */
  json?: unknown;
  /** Extra TLS options for https URLs (ca, servername, minVersion...). */
  tls?: Record<string, unknown>;
  /** Connect here whatever the URL's host name says (a test FQDN without DNS). */
  connectTo?: string;
  /** Send over this unix socket (http URLs; the host name is only the Host header). */
  socketPath?: string;
  timeoutMs?: number;
  /** A keep-alive agent whose connections are reused; by default each request opens its own. */
  agent?: Agent;
}

/** A small HTTP(S) client that shows exactly what the server answered (no redirects, no retries). */
export function http(url: string, options: HttpOptions = {}): Promise<HttpResponse> {
  const target = new URL(url);
  const requestFn = target.protocol === 'https:' ? httpsRequest : httpRequest;
  let headers = options.headers ?? {};
  let body = options.body;
  if (options.json !== undefined) {
    body = JSON.stringify(options.json);
    headers = Array.isArray(headers)
      ? [...headers, 'Content-Type', 'application/json']
      : { 'Content-Type': 'application/json', ...headers };
  }
  // With a flat header list Node sends no Host header of its own; HTTP/1.1 requires one.
  if (
    Array.isArray(headers) &&
    !headers.some((h, i) => i % 2 === 0 && h.toLowerCase() === 'host')
  ) {
    headers = ['Host', target.host, ...headers];
  }
  return new Promise((resolve, reject) => {
    const req = requestFn(
      target,
      {
        method: options.method ?? 'GET',
        headers,
        agent: options.agent ?? false,
        ...(options.connectTo ? { lookup: fixedLookup(options.connectTo) } : {}),
        ...(options.socketPath ? { socketPath: options.socketPath } : {}),
        timeout: options.timeoutMs ?? 10_000,
        ...(options.tls ?? {}),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
        });
      },
    );
    req.on('timeout', () =>
      req.destroy(new Error(`timeout after ${options.timeoutMs ?? 10_000} ms`)),
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** A DNS lookup that answers one address for every name (IPv4 or IPv6 literal). */
function fixedLookup(address: string): LookupFunction {
  const family = address.includes(':') ? 6 : 4;
  return ((
    _hostname: string,
    options: { all?: boolean },
    callback: (...args: unknown[]) => void,
  ) => {
    if (options.all) callback(null, [{ address, family }]);
    else callback(null, address, family);
  }) as LookupFunction;
}
