import { delimiter } from 'node:path';
import { BIN_DIR, MODULE_DIR, prepareSanitizedNginx } from './sanitized-nginx.js';

/**
 * The sanitizer suite's set-up: the sanitized module built, the nginx wrapper first on PATH
 * and the module's directory named for the native gateways the e2e files start (the test
 * workers inherit this environment).
 */
export default function setup(): void {
  prepareSanitizedNginx();
  process.env.PATH = `${BIN_DIR}${delimiter}${process.env.PATH ?? ''}`;
  process.env.GATEWAY_NGINX_MODULE_DIR = MODULE_DIR;
}
