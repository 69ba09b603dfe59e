import { connect, type OutgoingHttpHeaders } from 'node:http2';
import type { RawTarget } from './raw-tls.js';

export type H2Answer =
  | { kind: 'http'; status: number; contentType: string | undefined; body: string }
  /** The stream or the whole session was ended with an HTTP/2 error code instead of an answer. */
  | { kind: 'reset'; code: string };

/** One HTTP/2 request on a fresh session; `headers` go as they are (pseudo-headers included). */
export function h2(
  target: RawTarget,
  headers: OutgoingHttpHeaders,
  body?: string,
): Promise<H2Answer> {
  return new Promise((resolve, reject) => {
    const session = connect(`https://${target.host ?? '127.0.0.1'}:${target.port}`, {
      ca: target.ca,
      servername: target.servername,
    });
    let done = false;
    const finish = (answer: H2Answer) => {
      if (done) return;
      done = true;
      session.destroy();
      resolve(answer);
    };
    session.on('error', (err: NodeJS.ErrnoException) =>
      finish({ kind: 'reset', code: err.message }),
    );
    const stream = session.request(headers, { endStream: body === undefined });
    let status = 0;
    let contentType: string | undefined;
    const chunks: Buffer[] = [];
    stream.on('response', (h) => {
      status = Number(h[':status']);
      contentType = h['content-type'];
    });
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () =>
      finish({ kind: 'http', status, contentType, body: Buffer.concat(chunks).toString('utf8') }),
    );
    stream.on('error', (err: Error) => finish({ kind: 'reset', code: err.message }));
    stream.on('close', () => {
      if (!done && stream.rstCode)
        finish({ kind: 'reset', code: `stream reset ${stream.rstCode}` });
    });
    if (body !== undefined) stream.end(body);
    setTimeout(() => {
      if (!done) reject(new Error('no HTTP/2 answer in 10 s'));
      session.destroy();
    }, 10_000).unref();
  });
}
