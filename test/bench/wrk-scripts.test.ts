import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { onPath } from '../../bench/wrk/install.js';
import { FIXED_RATE_FLOOD, RANDOM_CREDENTIAL } from '../../bench/wrk/lua.js';
import { runWrk } from '../../bench/wrk/run.js';

// Issue 38's wrk scripts against a plain HTTP server that notes each request's Authorization
// header (wrk is the bench's own dependency; without it these tests cannot run).
const wrk = onPath('wrk');
let server: Server;
let url = '';
let dir = '';
const seen: (string | undefined)[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gw-wrk-scripts-'));
  server = createServer((req, res) => {
    seen.push(req.headers.authorization);
    res.end('ok');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});
afterAll(async () => {
  server?.close();
  await rm(dir, { recursive: true, force: true });
});

describe.skipIf(!wrk)("issue 38's wrk scripts", () => {
  test('RANDOM_CREDENTIAL presents a line of the file, drawn at random, per request', async () => {
    seen.length = 0;
    const lines = Array.from({ length: 50 }, (_, i) => `apk ${i + 1}.${'x'.repeat(43)}`);
    const file = join(dir, 'keys.txt');
    await writeFile(file, `${lines.join('\n')}\n`);
    const result = await runWrk({
      wrk: wrk!,
      url,
      headers: { Host: 'localhost' },
      seconds: 1,
      threads: 1,
      connections: 2,
      script: RANDOM_CREDENTIAL,
      scriptArgs: [file, '12345'],
      scriptDir: dir,
    });
    expect(result.requests).toBeGreaterThan(200);
    expect(seen.every((a) => a !== undefined && lines.includes(a))).toBe(true);
    // Uniform over 50 lines: a few hundred draws reach nearly all of them, in no fixed order.
    expect(new Set(seen).size).toBeGreaterThan(40);
    expect(seen.slice(0, 10)).not.toEqual(lines.slice(0, 10));
  });

  test('FIXED_RATE_FLOOD holds its rate, with random ids and secrets or no credential', async () => {
    for (const mode of ['random-id', 'none'] as const) {
      seen.length = 0;
      // 10 ms apart: 100 requests a second.
      const result = await runWrk({
        wrk: wrk!,
        url,
        headers: { Host: 'localhost' },
        seconds: 2,
        threads: 1,
        connections: 8,
        script: FIXED_RATE_FLOOD,
        scriptArgs: ['10', '777', mode],
        scriptDir: dir,
      });
      expect(result.rps).toBeGreaterThan(80);
      expect(result.rps).toBeLessThan(120);
      expect(result.statuses).toEqual({ '200': result.requests });
      if (mode === 'none') {
        expect(seen.every((a) => a === undefined)).toBe(true);
      } else {
        for (const a of seen) expect(a).toMatch(/^apk [1-9][0-9]{11}\.[A-Za-z0-9_-]{43}$/);
        expect(new Set(seen).size).toBe(seen.length);
      }
    }
  });
});
