import { posix } from 'node:path';
import { SIDECAR_PROOF } from '../common/contract.js';

/** Files of the configuration directory, relative to it, laid out as spec 5.3/5.4 says. */
export const LAYOUT = {
  defaultConf: 'nginx/conf.d/default.conf',
  sslConf: 'nginx/ssl/ssl.conf',
  certificate: 'nginx/ssl/nginx.crt',
  key: 'nginx/ssl/nginx.key',
  /** nginx's proof to the sidecar: made once, never rewritten (generator/sidecar-proof-file.ts). */
  sidecarProof: SIDECAR_PROOF.file,
  /** What the main nginx.conf includes: every server file an operator drops into conf.d. */
  confGlob: 'nginx/conf.d/*.conf',
} as const;

/** The absolute path nginx sees for a layout entry, given the directory nginx sees. */
export function inConfigDir(configDir: string, relative: string): string {
  return posix.join(configDir, relative);
}
