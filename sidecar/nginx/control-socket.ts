import { request } from 'node:http';

/**
 * One request to nginx's control socket whose answer is read whole (the Lua counters, the
 * refusal counts): its status and text, or null when nginx does not answer in `timeoutMs`,
 * answers more than `maxBody` bytes, or cannot be reached (not running: nothing to read).
 * `body`, when given, is sent as text (the tests' own POSTs). Never throws.
 */
export function readControlSocket(
  socketPath: string,
  path: string,
  method: 'GET' | 'POST',
  timeoutMs: number,
  maxBody: number,
  body?: string,
): Promise<{ status: number; text: string } | null> {
  const headers =
    body === undefined
      ? undefined
      : { 'Content-Type': 'text/plain', 'Content-Length': Buffer.byteLength(body) };
  return new Promise((resolve) => {
    const req = request({ socketPath, path, method, timeout: timeoutMs, headers }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > maxBody) req.destroy();
        else chunks.push(chunk);
      });
      res.on('error', () => resolve(null));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
      );
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(null));
    req.end(body);
  });
}
