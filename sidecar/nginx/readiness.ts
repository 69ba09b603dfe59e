import { CONTROL } from '../../common/contract.js';
import { SIDECAR_INSTANCE } from '../instance.js';
import { readControlSocket } from './control-socket.js';

/** Whether nginx serves, or why not (a Readiness of sidecar/metrics/readiness.ts). */
export type NginxReadiness = { ready: true } | { ready: false; code: string; message: string };

const TIMEOUT_MS = 1_000;
const MAX_BODY = 64 * 1024;

/**
 * Whether this sidecar's nginx serves: its control socket answers the (read-only) counters.
 * Part of `/readyz` when the sidecar has an nginx (NGINX_CONTROL_SOCKET), so that a balancer
 * or a Kubernetes probe gets one answer for the whole proxy + sidecar pair: a pair whose nginx
 * is down, starting or quitting takes no traffic.
 */
export async function checkNginx(
  socketPath: string,
  instance: string = SIDECAR_INSTANCE,
): Promise<NginxReadiness> {
  const answer = await readControlSocket(socketPath, CONTROL.metrics, 'GET', TIMEOUT_MS, MAX_BODY);
  if (answer?.status !== 200) {
    return {
      ready: false,
      code: 'NGINX_UNREACHABLE',
      message: answer
        ? `nginx's control socket answered HTTP ${answer.status}.`
        : "nginx's control socket does not answer.",
    };
  }
  return await checkNginxReachesSidecar(socketPath, instance);
}

/**
 * Whether nginx reaches this sidecar where it sends callers' questions (default.conf's
 * `upstream gateway_sidecar`): an nginx that answers its control socket but sends /auth to an
 * address where no sidecar is (a file rendered for another place) refuses every caller with
 * 503, and such a pair must not be "ready". A default.conf written before the probe location
 * existed answers 404: nothing to learn there, so that alone does not take the pair out.
 */
async function checkNginxReachesSidecar(
  socketPath: string,
  instance: string,
): Promise<NginxReadiness> {
  const probe = await readControlSocket(
    socketPath,
    CONTROL.sidecarProbe,
    'GET',
    TIMEOUT_MS,
    MAX_BODY,
  );
  if (probe?.status === 404) return { ready: true };
  let reached: unknown;
  try {
    reached =
      probe?.status === 200
        ? (JSON.parse(probe.text) as { instance?: unknown }).instance
        : undefined;
  } catch {
    reached = undefined;
  }
  if (reached === instance) return { ready: true };
  return {
    ready: false,
    code: 'SIDECAR_UNREACHABLE_FROM_NGINX',
    message:
      reached !== undefined
        ? "nginx's sidecar upstream (upstream gateway_sidecar in default.conf) reaches another sidecar, not this one."
        : `nginx cannot reach this sidecar at its sidecar upstream (upstream gateway_sidecar in default.conf): ${probe ? `HTTP ${probe.status}` : 'no answer'}. Every request would get 503 AUTH_UNAVAILABLE.`,
  };
}
