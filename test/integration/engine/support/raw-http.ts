import type { IncomingHttpHeaders } from 'node:http';
import { connect } from 'node:net';
import { http } from '../../../support/http.js';

/** What the engine answered, exactly. */
export interface RawAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  /** The parsed body, or undefined when it is not JSON. */
  // biome-ignore lint/suspicious/noExplicitAny: tests inspect arbitrary JSON.
  json: any;
  /** The Set-Cookie lines. */
  setCookies: string[];
}

export interface RawRequest {
  headers?: Record<string, string>;
  /** Sent as is. */
  body?: string | Buffer;
  /** Sent as JSON with Content-Type: application/json. */
  json?: unknown;
  /** A session cookie value to send as `engine_session=<value>`. */
  session?: string;
}

/** One HTTP request over loopback with nothing added or interpreted. */
export async function raw(
  base: string,
  method: string,
  path: string,
  req: RawRequest = {},
): Promise<RawAnswer> {
  const headers: Record<string, string> = { ...req.headers };
  let body = req.body;
  if (req.json !== undefined) {
    body = JSON.stringify(req.json);
    headers['Content-Type'] ??= 'application/json';
  }
  if (req.session !== undefined) headers.Cookie = `engine_session=${req.session}`;
  // Node omits Content-Length on DELETE bodies unless told; without it the body would be read
  // as the start of the next request.
  if (body !== undefined) headers['Content-Length'] ??= String(Buffer.byteLength(body));
  const res = await http(`${base}${path}`, {
    method,
    headers,
    ...(body !== undefined ? { body } : {}),
  });
  const cookies = res.headers['set-cookie'];
  return { ...res, setCookies: Array.isArray(cookies) ? cookies : [] };
}

/** Writes bytes to the engine's port and returns everything it answers before closing. */
export function rawSocket(base: string, bytes: string): Promise<string> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname);
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
    socket.end(bytes);
  });
}

/** The value of the `engine_session` cookie set by an answer, if any. */
export function sessionSet(answer: RawAnswer): string | undefined {
  for (const line of answer.setCookies) {
    const m = /^engine_session=([^;]*)/.exec(line);
    if (m) return m[1];
  }
  return undefined;
}
