import { randomBytes } from 'node:crypto';

/**
 * This sidecar process's id, answered on `SIDECAR_PROBE.path`: when nginx's probe comes back
 * with it, nginx reaches this sidecar, not merely some process on the configured address.
 */
export const SIDECAR_INSTANCE = randomBytes(12).toString('hex');
