/** One hostile request and the answer the gateway owes it. */
export interface Row {
  /** What is wrong with the request (and, where it is not obvious, why this answer). */
  name: string;
  /** The bytes written after the TLS handshake, as latin1; `{KEY}` stands for the admin key. */
  request: string;
  status: number;
  /** The first error code of the JSON body. */
  code: string;
  /** HTTP/0.9: the answer is the JSON body alone, with no status line to carry `status`. */
  http09?: true;
  /** Interim answers expected before the final one (100 Continue for Expect). */
  interim?: number[];
  /** Headers the answer must carry, lower-case names (X-jwt-error on a refused bearer). */
  headers?: Record<string, string>;
}

export const KEY_PLACEHOLDER = '{KEY}';
export const CLIENTS = '/v1/management/api-clients';

export interface Parts {
  /** Extra header lines, written as they are. */
  headers?: string[];
  /** Sent after the headers, with a matching Content-Length unless `length` is false. */
  body?: string;
  /** Carry the stack's admin key, to get past authentication. */
  key?: boolean;
  /** The Host line's value; null: no Host line at all. */
  host?: string | null;
  version?: string;
  length?: boolean;
}

/** A request as raw text: request line, Host, the key, `Connection: close`, then `headers`. */
export function raw(method: string, target: string, parts: Parts = {}): string {
  const lines = [`${method} ${target} ${parts.version ?? 'HTTP/1.1'}`];
  if (parts.host !== null) lines.push(`Host: ${parts.host ?? 'localhost'}`);
  if (parts.key) lines.push(`Authorization: apk ${KEY_PLACEHOLDER}`);
  lines.push('Connection: close', ...(parts.headers ?? []));
  if (parts.body !== undefined && parts.length !== false) {
    lines.push(`Content-Length: ${Buffer.byteLength(parts.body, 'latin1')}`);
  }
  return `${lines.join('\r\n')}\r\n\r\n${parts.body ?? ''}`;
}

/** With the admin key (every management row needs one to get past authentication). */
export function keyed(method: string, target: string, parts: Parts = {}): string {
  return raw(method, target, { ...parts, key: true });
}

/** A management POST with the admin key and the given headers and body. */
export function manage(headers: string[], body: string, parts: Parts = {}): string {
  return keyed('POST', CLIENTS, { headers, body, ...parts });
}

export function row(
  name: string,
  status: number,
  code: string,
  request: string,
  extra: Pick<Row, 'http09' | 'interim' | 'headers'> = {},
): Row {
  return { name, status, code, request, ...extra };
}
