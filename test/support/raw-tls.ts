import { connect as connectTcp, type Socket } from 'node:net';
import { connect } from 'node:tls';

/** What came back on one raw TLS connection. */
export type RawAnswer =
  | {
      kind: 'http';
      status: number;
      /** Header names in lower case; a repeated header keeps its last value. */
      headers: Record<string, string>;
      body: string;
      /** Interim (1xx) statuses seen before the final answer, e.g. 100 for Expect. */
      interim: number[];
    }
  /** HTTP/0.9 answers are the body alone: no status line, no headers. */
  | { kind: 'http09'; body: string }
  /** The server closed the connection without a byte of answer. */
  | { kind: 'closed' };

export interface RawTarget {
  /** Where to connect: loopback unless given (a container's address). */
  host?: string;
  port: number;
  ca: string;
  servername: string;
}

export interface ExchangeOptions {
  /** Plain TCP instead of TLS (to see what the TLS port says to plain HTTP). */
  plain?: boolean;
  /** Close the sending side (TLS close_notify, then FIN) right after the bytes. */
  endAfterWrite?: boolean;
  timeoutMs?: number;
}

/**
 * Writes `bytes` as they are on a fresh TLS connection (HTTP/1.1 by ALPN) and reads one answer:
 * interim 1xx answers are skipped, the final one is read by its Content-Length or chunks, or up
 * to the close. Nothing is normalised on the way, so malformed requests stay malformed.
 */
export function exchange(
  target: RawTarget,
  bytes: Buffer,
  options: ExchangeOptions = {},
): Promise<RawAnswer> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  return new Promise((resolve, reject) => {
    const socket: Socket = options.plain
      ? connectTcp({ host: target.host ?? '127.0.0.1', port: target.port })
      : connect({
          host: target.host ?? '127.0.0.1',
          port: target.port,
          servername: target.servername,
          ca: target.ca,
          ALPNProtocols: ['http/1.1'],
        });
    let received = Buffer.alloc(0);
    let settled = false;
    const finish = (answer: RawAnswer | Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      if (answer instanceof Error) reject(answer);
      else resolve(answer);
    };
    const timer = setTimeout(
      () =>
        finish(
          new Error(
            `no complete answer in ${timeoutMs} ms; got ${JSON.stringify(received.toString('latin1'))}`,
          ),
        ),
      timeoutMs,
    );
    socket.once(options.plain ? 'connect' : 'secureConnect', () => {
      socket.write(bytes);
      if (options.endAfterWrite) socket.end();
    });
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const answer = parse(received, false);
      if (answer) finish(answer);
    });
    // A reset after the answer is normal for nginx's lingering close; what was read counts.
    socket.on('error', () => finish(parse(received, true) ?? { kind: 'closed' }));
    socket.on('close', () => finish(parse(received, true) ?? { kind: 'closed' }));
  });
}

/** The answer in `data`, or null while more is needed (`closed`: no more will come). */
function parse(data: Buffer, closed: boolean): RawAnswer | null {
  if (data.length === 0) return closed ? { kind: 'closed' } : null;
  if (!data.subarray(0, 5).equals(Buffer.from('HTTP/'))) {
    if (data.length < 5 && !closed) return null;
    return closed ? { kind: 'http09', body: data.toString('utf8') } : null;
  }
  const interim: number[] = [];
  let rest = data;
  for (;;) {
    const end = rest.indexOf('\r\n\r\n');
    if (end < 0) return null;
    const [statusLine, ...lines] = rest.subarray(0, end).toString('latin1').split('\r\n');
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? '')?.[1]);
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    const body = rest.subarray(end + 4);
    if (status >= 100 && status < 200) {
      interim.push(status);
      rest = body;
      continue;
    }
    const length = headers['content-length'];
    if (length !== undefined) {
      // Cut short by a close: what came is the answer, and its body will not parse.
      if (body.length < Number(length) && !closed) return null;
      const text = body.subarray(0, Number(length)).toString('utf8');
      return { kind: 'http', status, headers, body: text, interim };
    }
    if (headers['transfer-encoding'] === 'chunked') {
      const decoded = dechunk(body);
      return decoded ? { kind: 'http', status, headers, body: decoded, interim } : null;
    }
    return closed ? { kind: 'http', status, headers, body: body.toString('utf8'), interim } : null;
  }
}

/** A chunked body decoded, or null when its last chunk has not arrived yet. */
function dechunk(data: Buffer): string | null {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const lineEnd = data.indexOf('\r\n', at);
    if (lineEnd < 0) return null;
    const size = Number.parseInt(data.subarray(at, lineEnd).toString('latin1'), 16);
    if (size === 0) return Buffer.concat(parts).toString('utf8');
    if (data.length < lineEnd + 2 + size + 2) return null;
    parts.push(data.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
}
