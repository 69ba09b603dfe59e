import { execFile, spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ALLOWED_METHODS } from '../../common/contract.js';
import {
  allows,
  decidePath,
  type PermissionRule,
  permissionsText,
  utf8Bytes,
  validatePermissions,
} from '../../common/permissions.js';
import { type RunningNginx, startNginx } from '../integration/generator/support/nginx.js';
import { freePort } from '../support/embedded-postgres.js';

// The Lua matcher (lua/gateway/permissions.lua, inside the real nginx) and the nginx module's
// (ngx_http_gateway_hit_permits, compiled here with a small driver) against the TypeScript
// definition (common/permissions.ts) on generated rule sets and request targets: Lua gives the
// same refusals, the same reasons, the same yes; C the same yes (it leaves every refusal to
// Lua). test/e2e/permissions.test.ts checks each rule shape on both paths through nginx.

interface Case {
  text: string;
  method: string;
  /** latin1 bytes in base64: targets are bytes, not text. */
  target: string;
  line: string;
}
interface Judged {
  refused: string | null;
  why: string | null;
}

let nginx: RunningNginx;
let home: string;
let port: number;

beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), 'gw-perm-'));
  port = await freePort();
  await mkdir(join(home, 'nginx', 'conf.d'), { recursive: true });
  await writeFile(
    join(home, 'nginx', 'conf.d', 'perm.conf'),
    `map "" $gateway_request_id { default $request_id; }
server {
    listen 127.0.0.1:${port};
    client_max_body_size 64m;
    client_body_buffer_size 64m;
    location = /judge {
        default_type application/json;
        content_by_lua_block {
            local cjson = require("cjson")
            local permissions = require("gateway.permissions")
            ngx.req.read_body()
            local out = {}
            for i, c in ipairs(cjson.decode(ngx.req.get_body_data())) do
              local perms = permissions.parse(c.text)
              local target = ngx.decode_base64(c.target)
              local refused, why = permissions.judge(perms, c.method, c.line:gsub("TARGET", function() return target end), target)
              out[i] = { refused = refused or cjson.null, why = why or cjson.null }
            end
            ngx.say(cjson.encode(out))
        }
    }
}
`,
  );
  nginx = await startNginx(home, port);
});
afterAll(async () => {
  await nginx?.stop();
  await rm(home, { recursive: true, force: true });
});

async function judgeInLua(cases: Case[]): Promise<Judged[]> {
  const res = await fetch(`http://127.0.0.1:${port}/judge`, {
    method: 'POST',
    body: JSON.stringify(cases),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as Judged[];
}

/** Runs the module's matcher on each case: a driver over ngx_http_gateway_hit_permissions.c. */
async function permitsInC(cases: { text: string; method: string; target: string }[]) {
  const driver = join(home, 'permits.c');
  const exe = join(home, 'permits');
  await writeFile(
    driver,
    `#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ngx_http_gateway_hit_parse.h"
static size_t unhex(char *s, unsigned char *out) {
  size_t n = 0;
  for (; s[0] && s[1]; s += 2) { char b[3] = { s[0], s[1], 0 }; out[n++] = (unsigned char) strtol(b, NULL, 16); }
  return n;
}
int main(void) {
  static char line[1 << 16];
  static unsigned char rules[1 << 15], method[16], target[1 << 14];
  while (fgets(line, sizeof(line), stdin)) {
    char *a = strtok(line, " \\n"), *b = strtok(NULL, " \\n"), *c = strtok(NULL, " \\n");
    size_t rl = unhex(a, rules), ml = unhex(b, method), tl = unhex(c ? c : "", target);
    printf("%d\\n", ngx_http_gateway_hit_permits(rules, rl, method, ml, target, tl));
  }
  return 0;
}
`,
  );
  const src = join(import.meta.dirname, '../../nginx-module');
  await new Promise<void>((resolve, reject) =>
    execFile(
      'gcc',
      ['-O1', '-I', src, join(src, 'ngx_http_gateway_hit_permissions.c'), driver, '-o', exe],
      (err, _out, stderr) => (err ? reject(new Error(stderr)) : resolve()),
    ),
  );
  const hex = (s: string) => Buffer.from(s, 'latin1').toString('hex');
  const input = cases.map((c) => `${hex(c.text)} ${hex(c.method)} ${hex(c.target)}\n`).join('');
  const out = await new Promise<string>((resolve, reject) => {
    const child = spawn(exe);
    let text = '';
    child.stdout.on('data', (d: Buffer) => {
      text += d.toString();
    });
    child.on('error', reject);
    child.on('close', () => resolve(text));
    child.stdin.end(input);
  });
  return out
    .trim()
    .split('\n')
    .map((l) => l === '1');
}

const snake = (name: string) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** What common/permissions.ts says of the same request. */
function judgeInTs(rules: PermissionRule[], method: string, target: string, line: string): Judged {
  if (!line.startsWith(`${method} /`)) return { refused: 'ambiguous', why: 'not_origin_form' };
  const decided = decidePath(target);
  if (!decided.ok) return { refused: 'ambiguous', why: snake(decided.reason) };
  return allows(rules, method, decided.path)
    ? { refused: null, why: null }
    : { refused: 'denied', why: null };
}

const SEGMENT_CHARS = "abAB09-._~!$&'()+,=:@é".split('');
const literal = fc
  .string({ unit: fc.constantFrom(...SEGMENT_CHARS), minLength: 1, maxLength: 3 })
  .filter((s) => s !== '.' && s !== '..');
const patternSegment = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom('a', 'b', 'ab', 'é') },
  { weight: 1, arbitrary: literal },
  { weight: 2, arbitrary: fc.constant('*') },
);
const pattern = fc
  .tuple(fc.array(patternSegment, { maxLength: 4 }), fc.boolean())
  .map(([segments, subtree]) => {
    const all = subtree ? [...segments, '**'] : segments;
    return all.length === 0 ? '/' : `/${all.join('/')}`;
  });
const rule = fc.record({
  methods: fc.subarray([...ALLOWED_METHODS], { minLength: 1 }),
  path: pattern,
});

/** Request targets as bytes: plain paths near the patterns, encodings of them, and tricks. */
const pathByte = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('/', 'a', 'b', 'é', '/a', '/b', '/ab') },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      '%61',
      '%C3%A9',
      '%c3%a9',
      '%2F',
      '%2e',
      '%2E%2E',
      '%5C',
      '%25',
      '%00',
      '%20',
    ),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom('.', '..', '//', ';', '\\', '#', '?', '%', '%zz', ' ', '\t', '*'),
  },
);
const target = fc.array(pathByte, { maxLength: 8 }).map((parts) => utf8Bytes(`/${parts.join('')}`));

describe('the Lua matcher agrees with common/permissions.ts', () => {
  test('on generated rule sets, methods and targets (origin-form and absolute-form)', async () => {
    const samples = fc.sample(
      fc.tuple(
        fc.array(rule, { maxLength: 4 }),
        fc.constantFrom(...ALLOWED_METHODS),
        target,
        fc.constantFrom('origin', 'origin', 'origin', 'absolute'),
      ),
      { numRuns: 4000, seed: 39 },
    );
    const cases: Case[] = [];
    const expected: Judged[] = [];
    for (const [raw, method, t, form] of samples) {
      const check = validatePermissions(raw);
      if (!check.ok || check.permissions === null) throw new Error('a generated rule is invalid');
      const rules = check.permissions;
      const line =
        form === 'absolute' ? `${method} http://gw.test${t} HTTP/1.1` : `${method} ${t} HTTP/1.1`;
      cases.push({
        text: permissionsText(rules),
        method,
        target: Buffer.from(t, 'latin1').toString('base64'),
        line:
          form === 'absolute'
            ? `${method} http://gw.test/TARGET HTTP/1.1`
            : `${method} TARGET HTTP/1.1`,
      });
      expected.push(judgeInTs(rules, method, t, line));
    }
    const judged = await judgeInLua(cases);
    const disagreements = judged
      .map((j, i) => ({ i, lua: j, ts: expected[i] }))
      .filter(({ lua, ts }) => lua.refused !== ts?.refused || lua.why !== ts?.why)
      .slice(0, 5)
      .map(({ i, lua, ts }) => ({ ...cases[i], lua, ts }));
    expect(disagreements).toEqual([]);
    // The sample reaches every outcome, not only refusals.
    const outcomes = new Set(judged.map((j) => j.refused ?? 'allowed'));
    expect([...outcomes].sort()).toEqual(['allowed', 'ambiguous', 'denied']);

    // The module: it checks the absolute-form itself (the request line), so origin-form only.
    const origin = samples
      .map(([, method, t, form], i) => ({ form, method, t, i }))
      .filter((s) => s.form === 'origin');
    const inC = await permitsInC(
      origin.map((s) => ({ text: cases[s.i]!.text, method: s.method, target: s.t })),
    );
    expect(inC).toHaveLength(origin.length);
    const cDisagreements = origin
      .filter((s, j) => inC[j] !== (expected[s.i]!.refused === null))
      .slice(0, 5)
      .map((s) => ({ text: cases[s.i]!.text, method: s.method, target: s.t, ts: expected[s.i] }));
    expect(cDisagreements).toEqual([]);
    expect(inC.filter(Boolean).length).toBeGreaterThan(0);
  });
});
