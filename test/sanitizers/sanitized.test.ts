import { readFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { NGINX_MODULE } from '../../common/contract.js';
import {
  type GatewayUnderTest,
  startGateway,
} from '../integration/generator/support/gateway-harness.js';
import { https } from '../integration/generator/support/https-client.js';
import { moduleHits } from '../support/nginx-control.js';
import { MODULE_DIR } from './sanitized-nginx.js';

// The sanitizer suite runs what it says: nginx's workers have the ASan runtime and the module
// built with it mapped (a set-up that silently fell back to the plain module would pass every
// file with no report). The real nginx in front of a stub sidecar, as the integration tests.
let gw: GatewayUnderTest;

beforeAll(async () => {
  gw = await startGateway({ settings: { auth_cache: { max_age_ms: 60_000 } } });
});
afterAll(() => gw?.stop());

describe('the sanitized nginx', () => {
  test('its workers map the ASan runtime and the sanitized module, and it passes a cached decision through the module', async () => {
    const master = (await readFile(join(gw.nginx.runtimeDir, 'nginx.pid'), 'utf8')).trim();
    const workers = (await readdir('/proc')).filter((pid) => {
      try {
        // The fourth field of /proc/<pid>/stat is the parent's pid (the name, in parentheses,
        // has no space here: nginx).
        return readFileSync(`/proc/${pid}/stat`, 'utf8').split(' ')[3] === master;
      } catch {
        return false;
      }
    });
    expect(workers.length).toBeGreaterThan(0);
    for (const pid of workers) {
      const maps = await readFile(`/proc/${pid}/maps`, 'utf8');
      expect(maps).toMatch(/libasan\.so/);
      expect(maps).toContain(join(MODULE_DIR, NGINX_MODULE.file));
    }
    for (let i = 0; i < 3; i += 1) {
      const res = await https(gw.httpsPort, '/data', gw.ca, {
        headers: { Authorization: 'Bearer sanitized' },
      });
      expect(res.status).toBe(200);
    }
    expect(gw.authCalls()).toHaveLength(1);
    expect(await moduleHits(gw)).toBe(2);
  });
});
