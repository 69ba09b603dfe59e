import { createHash } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  CONTROL,
  DECISION_FROM_SIDECAR,
  NGINX_NAMES,
  RATE_LIMIT_STORE,
} from '../../common/contract.js';
import {
  type GatewayUnderTest,
  startGateway,
} from '../integration/generator/support/gateway-harness.js';
import { https } from '../integration/generator/support/https-client.js';
import { controlPost, moduleHits as moduleHitsOf } from '../support/nginx-control.js';

// What the module reads as a number from a shared dict (a revocation marker here) holding
// something else: lua-nginx-module copies a string into the caller's buffer, or into memory it
// allocates when the buffer is too small. The module handed it none (a NULL buffer of 0 bytes),
// so every such string leaked (issue 40, finding 4: with that code this file fails here, on
// LeakSanitizer's report of the 201 bytes of the two strings below). Only the gateway writes these dicts; the test plants the values through
// a location of its own on the control socket. The module must take the request as revoked (not
// pass it), and in this suite LeakSanitizer and ASan must say nothing when nginx stops.
let gw: GatewayUnderTest;
const secretOf = (id: number) => createHash('sha256').update(`secret ${id}`).digest('base64url');
const hex = (text: string) => createHash('sha256').update(text).digest('hex');
const PLANT = '/test-plant';

beforeAll(async () => {
  gw = await startGateway({
    settings: { auth_cache: { max_age_ms: 60_000 } },
    async beforeStart(configDir) {
      const file = join(configDir, 'nginx/conf.d/default.conf');
      const text = await readFile(file, 'utf8');
      const anchor = '        content_by_lua_block { require("gateway.metrics").serve() }\n    }\n';
      expect(text).toContain(anchor);
      const plant = [
        `    location = ${PLANT} {`,
        '        content_by_lua_block {',
        '            local value = ngx.var.arg_value',
        '            if ngx.var.arg_type == "boolean" then value = true end',
        '            local dict = ngx.shared[ngx.var.arg_dict or "gateway_revocations"]',
        '            dict:set(ngx.unescape_uri(ngx.var.arg_key), value)',
        '            ngx.exit(204)',
        '        }',
        '    }',
        '',
      ].join('\n');
      await writeFile(file, text.replace(anchor, `${anchor}\n${plant}`));
    },
  });
  gw.stubSidecar.handler = (seen, res) => {
    const id = Number(/^apk ([0-9]+)\./.exec(String(seen.headers.authorization))?.[1]);
    res.writeHead(204, {
      // Ids from 3000: clients with a rate limit.
      ...(id >= 3000 ? { [DECISION_FROM_SIDECAR.rateLimit]: '100 3600' } : {}),
      'X-Gateway-Key-Record': 'known',
      'X-Gateway-Client-Row': String(id),
      'X-Gateway-Key-Hash': hex(secretOf(id)),
      'X-Client-Id': String(id),
      'X-Client-Name': 'planted',
      'X-Client-Is-Admin': 'false',
      'X-Auth-Method': 'apk',
    });
    res.end();
  };
});
afterAll(() => gw?.stop());

const moduleHits = () => moduleHitsOf(gw);
const get = (id: number) =>
  https(gw.httpsPort, '/data', gw.ca, { headers: { Authorization: `apk ${id}.${secretOf(id)}` } });

describe('a revocation marker that is not a number, read by the module', () => {
  test.each([
    ['a short string', 2001, 'type=string&key=', 'x'],
    ['a string longer than its buffer', 2002, 'type=string&key=', 'y'.repeat(200)],
    ['a boolean', 2003, 'type=boolean&key=', ''],
  ])('%s: taken as revoked, never passed by the module', async (_, id, query, value) => {
    expect((await get(id)).status).toBe(200); // learnt (Lua)
    const before = await moduleHits();
    expect((await get(id)).status).toBe(200);
    expect(await moduleHits()).toBe(before + 1);
    expect(await controlPost(gw, `${PLANT}?${query}${id}&value=${value}`)).toBe(204);
    // Lua, reading the same marker, fails on it (a 500: nginx's dicts are the gateway's own,
    // and this is the test's doing); what matters here is that the module did not pass it.
    const answer = await get(id);
    expect(answer.status).not.toBe(200);
    expect(await moduleHits()).toBe(before + 1);
  });
});

describe('the rate limit store flag when it is not a number, read by the module', () => {
  test.each([
    ['a short string', 3001, 'type=string', 'x'],
    ['a string longer than its buffer', 3002, 'type=string', 'y'.repeat(200)],
    ['a boolean', 3003, 'type=boolean', ''],
  ])('%s: closed, never passed by the module; Lua answers 503', async (_, id, type, value) => {
    expect((await get(id)).status).toBe(200); // learnt (Lua)
    const before = await moduleHits();
    expect((await get(id)).status).toBe(200);
    expect(await moduleHits()).toBe(before + 1);
    const key = encodeURIComponent(RATE_LIMIT_STORE.closedKey);
    const where = `dict=${NGINX_NAMES.limitsDict}&key=${key}`;
    expect(await controlPost(gw, `${PLANT}?${type}&${where}&value=${value}`)).toBe(204);
    try {
      const answer = await get(id);
      expect(answer.status).toBe(503);
      expect(answer.headers['retry-after']).toBe('1');
      expect(await moduleHits()).toBe(before + 1);
    } finally {
      expect(await controlPost(gw, `${CONTROL.limits}?list=0&closed=0`)).toBe(200);
    }
    expect((await get(id)).status).toBe(200);
    expect(await moduleHits()).toBe(before + 2);
  });
});
