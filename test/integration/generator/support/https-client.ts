import type { IncomingHttpHeaders } from 'node:http';
import { http as request } from '../../../support/http.js';

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

/** One HTTPS request to the gateway on 127.0.0.1, verifying its certificate (for localhost) against `ca`. */
export async function https(
  port: number,
  path: string,
  ca: string,
  call: Call = {},
): Promise<Answer> {
  const res = await request(`https://localhost:${port}${path}`, {
    method: call.method ?? 'GET',
    headers: call.headers ?? {},
    ...(call.body !== undefined ? { body: call.body } : {}),
    tls: { ca, servername: 'localhost' },
    connectTo: '127.0.0.1',
  });
  return { status: res.status, headers: res.headers, body: res.text };
}

/** One plain-HTTP request on 127.0.0.1. */
export async function http(port: number, path: string): Promise<Answer> {
  const res = await request(`http://127.0.0.1:${port}${path}`);
  return { status: res.status, headers: res.headers, body: res.text };
}

export { type Handshake, handshake } from '../../../support/tls.js';
