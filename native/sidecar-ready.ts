import { request } from 'node:http';
import type { ListenAddress } from '../common/listen.js';

/** How long the runner waits for the sidecar's /readyz before it says why and goes on. */
export const READY_TIMEOUT_MS = 60_000;

/** How an operator reaches a listen address: a URL, or `unix:/path`. */
export function describeListen(address: ListenAddress): string {
  if ('socket' in address) return `unix:${address.socket}`;
  const host = address.host.includes(':') ? `[${address.host}]` : address.host;
  return `http://${host}:${address.port}`;
}

/**
 * Polls the sidecar's /readyz until it answers 200; past `timeoutMs`, says why it is not ready
 * and goes on (the pair still decides correctly, asking the sidecar where nginx cannot).
 */
export async function sidecarReady(
  listen: ListenAddress,
  timeoutMs: number,
  say: (line: string) => void,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const answer = await new Promise<{ status: number; text: string }>((resolve) => {
      const target =
        'socket' in listen
          ? { socketPath: listen.socket }
          : { host: listen.host, port: listen.port };
      const req = request({ ...target, path: '/readyz', timeout: 2_000 }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      });
      req.on('error', () => resolve({ status: 0, text: '' }));
      req.on('timeout', () => req.destroy());
      req.end();
    });
    if (answer.status === 200) return;
    if (Date.now() > deadline) {
      say(`Not ready yet (the sidecar's /readyz says ${answer.status}: ${answer.text.trim()})`);
      return;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}
