import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { NGINX_NAMES } from '../../common/contract.js';
import { packageRoot } from '../../common/package-root.js';
import { LUA_CONTRACT_PATH, renderLuaContract } from '../../generator/index.js';
import { type RunningNginx, startNginx } from '../integration/generator/support/nginx.js';
import { freePort } from '../support/embedded-postgres.js';

// The pure Lua functions, run inside the real nginx (its LuaJIT and ngx API): the cases of every
// module (test/lua/cases/<module path>.lua), each failure named by its case.

interface LuaResult {
  name: string;
  ok: boolean;
  error?: string;
}

let nginx: RunningNginx;
let results: LuaResult[] = [];
let home: string;

beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), 'gw-lua-'));
  const port = await freePort();
  const runner = join(import.meta.dirname, 'run.lua');
  const dir = join(import.meta.dirname, 'cases');
  // cases/sidecar/ holds the cases of lua/gateway/sidecar/, as the modules' own folders.
  const files = (await readdir(dir, { recursive: true })).filter((f) => f.endsWith('.lua')).sort();
  const list = files.map((f) => JSON.stringify(join(dir, f))).join(', ');
  await mkdir(join(home, 'nginx', 'conf.d'), { recursive: true });
  // The gateway's main nginx.conf (Lua module, package path), with only this server in it and
  // the request id its access log names (default.conf's, without trusted proxies).
  await writeFile(
    join(home, 'nginx', 'conf.d', 'lua.conf'),
    `map "" $gateway_request_id { default $request_id; }
# The limits dict, for the cases that read and write usage counts.
lua_shared_dict ${NGINX_NAMES.limitsDict} 1m;
server {
    listen 127.0.0.1:${port};
    location = /cases {
        default_type application/json;
        content_by_lua_block {
            local run = dofile("${runner}")
            ngx.say(require("cjson").encode(run({ ${list} })))
        }
    }
}
`,
  );
  nginx = await startNginx(home, port);
  const res = await fetch(`http://127.0.0.1:${port}/cases`);
  results = (await res.json()) as LuaResult[];
});
afterAll(async () => {
  await nginx?.stop();
  await rm(home, { recursive: true, force: true });
});

describe('lua/gateway pure functions (in nginx)', () => {
  test('every case passes', () => {
    expect(results.length).toBeGreaterThanOrEqual(12);
    const failures = results.filter((r) => !r.ok).map((r) => `${r.name}: ${r.error}`);
    expect(failures).toEqual([]);
  });
});

test('lua/gateway/contract.lua is generated from common/ (UPDATE_GOLDEN=1 rewrites it)', async () => {
  const path = join(packageRoot(), LUA_CONTRACT_PATH);
  const expected = renderLuaContract();
  if (process.env.UPDATE_GOLDEN === '1') await writeFile(path, expected);
  expect(await readFile(path, 'utf8')).toBe(expected);
});
