import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { launchNativeGateway, type NativeGatewayProcess } from '../support/native-gateway.js';

// Issue 42: the README's "Using it" commands, followed in order as a reader follows them, work
// as written. Every ```sh block from "## Using it" up to the next top-level section, then every
// one of docs/managing-clients.md (where "Using it" continues: expiry, rotation, audit, the
// bootstrap lock, rate limits), runs in one bash, in a directory whose `.gateway` is the
// gateway's home, so `CA=.gateway/...` is the README's own line. Only the port (a free one, not
// 8443) and the key placeholder change.

const ROOT = join(import.meta.dirname, '..', '..');
let dir: string;
let gateway: NativeGatewayProcess;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gw-readme-'));
  gateway = await launchNativeGateway({
    home: join(dir, '.gateway'),
    env: { API_KEY_CREATE: 'true' },
  });
}, 180_000);

afterAll(async () => {
  await gateway?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** The shell blocks of a Markdown section and its subsections (without a heading: all), in order. */
function shellBlocks(markdown: string, heading?: string): string[] {
  let section = markdown;
  if (heading !== undefined) {
    const start = markdown.indexOf(`\n${heading}\n`);
    expect(start, heading).toBeGreaterThan(0);
    const end = markdown.indexOf('\n## ', start + heading.length + 1);
    section = markdown.slice(start, end === -1 ? undefined : end);
  }
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

function bash(script: string): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile(
      'bash',
      ['-eu', '-o', 'pipefail', '-c', script],
      { cwd: dir, env: { PATH: process.env.PATH } },
      (error, out, err) => resolve({ code: error ? Number(error.code ?? 1) : 0, out, err }),
    );
  });
}

test('"Using it" and its subsections run in order without one error answer', async () => {
  const readme = await readFile(join(ROOT, 'README.md'), 'utf8');
  const managing = await readFile(join(ROOT, 'docs/managing-clients.md'), 'utf8');
  const blocks = [...shellBlocks(readme, '## Using it'), ...shellBlocks(managing)];
  expect(blocks.length).toBeGreaterThanOrEqual(6);
  const placeholder = 'KEY=<the NEWLY GENERATED API KEY>';
  expect(blocks[0]).toContain(placeholder);
  const script = blocks
    .join('\n')
    .replace(placeholder, `KEY=${gateway.adminKey}`)
    .replaceAll('localhost:8443', `localhost:${gateway.port}`);

  const run = await bash(script);
  expect(run.code, run.err).toBe(0);
  // Every error of the gateway is {"errors":[...]}: a NOT_FOUND on a deleted client included.
  expect(run.out).not.toContain('"errors"');
  expect(run.out).toContain('"api_key_id":2');
  expect(run.out).toMatch(/"previous_key_expires_at":"[^"]+"/); // client 2 rotated
  expect(run.out).toContain('{"bootstrap_locked":true}');
  expect(run.out).toContain('"step":"minute"');
  // The bootstrap client is gone: its key is refused, the admin key made on the way works.
  const listed = await bash(
    `curl -s --cacert .gateway/config/nginx/ssl/nginx.crt https://localhost:${gateway.port}/v1/management/api-clients/1 -H "Authorization: apk ${gateway.adminKey}"`,
  );
  expect(listed.out).toContain('INVALID_API_KEY');
});
