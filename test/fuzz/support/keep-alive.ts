import { Agent, request } from 'node:http';

const agent = new Agent({ keepAlive: true, maxSockets: 4 });

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** One request over a kept-alive connection: fuzzing sends tens of thousands. */
export function send(
  base: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string | Buffer,
): Promise<Reply> {
  // Node sends a GET or DELETE body without a length unless told; the server would then read
  // it as the next request. Framing is nginx's business in production, not what is fuzzed here.
  const framed =
    body === undefined
      ? headers
      : { ...headers, 'Content-Length': String(Buffer.byteLength(body)) };
  return new Promise((resolve, reject) => {
    const req = request(`${base}${path}`, { method, headers: framed, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          text: Buffer.concat(chunks).toString('utf8'),
        }),
      );
    });
    req.on('error', reject);
    req.end(body);
  });
}
