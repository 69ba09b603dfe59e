import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';

export interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface Call {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
}

function collect(res: import('node:http').IncomingMessage): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on('data', (chunk: Buffer) => chunks.push(chunk));
    res.on('error', reject);
    res.on('end', () =>
      resolve({
        status: res.statusCode ?? 0,
        headers: res.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      }),
    );
  });
}

/** One HTTPS request to the gateway on 127.0.0.1, verifying its certificate against `ca`. */
export function https(port: number, path: string, ca: string, call: Call = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      {
        host: '127.0.0.1',
        port,
        path,
        method: call.method ?? 'GET',
        headers: call.headers,
        servername: 'localhost',
        ca,
        agent: false,
      },
      (res) => collect(res).then(resolve, reject),
    );
    req.on('error', reject);
    req.end(call.body);
  });
}

/** One plain-HTTP request on 127.0.0.1. */
export function http(port: number, path: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, agent: false }, (res) =>
      collect(res).then(resolve, reject),
    );
    req.on('error', reject);
    req.end();
  });
}

export { type Handshake, handshake } from '../../support/tls.js';
