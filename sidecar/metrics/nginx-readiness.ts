import { CONTROL } from '../../common/contract.js';
import { readControlSocket } from '../control-socket-read.js';
import type { Readiness } from './readiness.js';

const TIMEOUT_MS = 1_000;
const MAX_BODY = 64 * 1024;

/**
 * Whether this sidecar's nginx serves: its control socket answers the (read-only) counters.
 * Part of `/readyz` when the sidecar has an nginx (NGINX_CONTROL_SOCKET), so that a balancer
 * or a Kubernetes probe gets one answer for the whole proxy + sidecar pair: a pair whose nginx
 * is down, starting or quitting takes no traffic.
 */
export async function checkNginx(socketPath: string): Promise<Readiness> {
  const answer = await readControlSocket(socketPath, CONTROL.metrics, 'GET', TIMEOUT_MS, MAX_BODY);
  if (answer?.status === 200) return { ready: true };
  return {
    ready: false,
    code: 'NGINX_UNREACHABLE',
    message: answer
      ? `nginx's control socket answered HTTP ${answer.status}.`
      : "nginx's control socket does not answer.",
  };
}
