import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { NGINX_MODULE } from '../../../common/contract.js';
import { luaCounters, moduleHits } from '../../support/nginx-control.js';
import { type GatewayUnderTest, startGateway } from './support/gateway-harness.js';
import { https } from './support/https-client.js';

// The nginx module calls lua-nginx-module's private functions, declared by hand: it runs only
// with the Lua module it was built and tested against (NGINX_MODULE.luaModuleVersion), which
// the Lua code says with the hashing key in the master (lua/gateway/decision_key.lua). The real nginx
// and Lua module, in front of a stub sidecar; a second nginx whose init_by_lua says another
// version, as a lua-nginx-module update would.

let current: GatewayUnderTest;
let other: GatewayUnderTest;
const OTHER_VERSION = NGINX_MODULE.luaModuleVersion + 1;
const SETTINGS = { auth_cache: { max_age_ms: 60_000 } };

beforeAll(async () => {
  current = await startGateway({ settings: SETTINGS });
  other = await startGateway({
    settings: SETTINGS,
    async beforeStart(configDir) {
      const file = join(configDir, 'nginx/conf.d/default.conf');
      const text = await readFile(file, 'utf8');
      const line = 'init_by_lua_block { ';
      expect(text).toContain(line);
      await writeFile(
        file,
        text.replace(line, `${line}ngx.config.ngx_lua_version = ${OTHER_VERSION}; `),
      );
    },
  });
});
afterAll(async () => {
  await current?.stop();
  await other?.stop();
});

/** Three requests with one bearer token: the first asked and cached by Lua. Module hits. */
async function moduleHitsOfThree(gw: GatewayUnderTest, token: string): Promise<number> {
  const before = await moduleHits(gw);
  for (let i = 0; i < 3; i += 1) {
    const res = await https(gw.httpsPort, '/data', gw.ca, {
      headers: { Authorization: `Bearer ${token}` },
    });
    expect(res.status).toBe(200);
  }
  return (await moduleHits(gw)) - before;
}

describe("the module and lua-nginx-module's version", () => {
  test('the version it was tested with: on (cached decisions pass through it), module_off 0', async () => {
    expect(await moduleHitsOfThree(current, 'token-on')).toBe(2);
    expect((await luaCounters(current)).module_off).toBe(0);
    expect(await current.nginx.errorLog()).not.toContain(`${NGINX_MODULE.directive}: off`);
  });

  test('another version: switched off at start, said in the error log and by module_off; Lua decides every request', async () => {
    expect(await moduleHitsOfThree(other, 'token-off')).toBe(0);
    expect((await luaCounters(other)).module_off).toBe(1);
    // The Lua code still decides from its cache: asked once for three requests.
    expect(other.authCalls()).toHaveLength(1);
    const log = await other.nginx.errorLog();
    expect(log).toContain(
      `${NGINX_MODULE.directive}: off, every request goes to the Lua code: built and tested against lua-nginx-module 0.10.23, and this is another version`,
    );
    expect(log).toContain(
      `the gateway's nginx module is off: it was built and tested against lua-nginx-module ${NGINX_MODULE.luaModuleVersion}, this is ${OTHER_VERSION}`,
    );
  });
});
