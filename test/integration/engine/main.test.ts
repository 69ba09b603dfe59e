import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterEach, expect, test } from 'vitest';
import { apiSession } from './support/engine.js';
import { raw, sessionSet } from './support/raw-http.js';

// engine/main.ts run from source with vite-node (vitest's own runner), so this test needs no build.
const VITE_NODE = fileURLToPath(
  new URL('../../../node_modules/vite-node/vite-node.mjs', import.meta.url),
);

const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
});

/** Starts the entry point and collects stdout lines until the listening line. */
async function startMain(env: Record<string, string>) {
  const child = spawn(process.execPath, [VITE_NODE, 'engine/main.ts'], {
    env: { ...process.env, ENGINE_PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  const lines: string[] = [];
  for await (const line of createInterface({ input: child.stdout! })) {
    lines.push(line);
    if (line.startsWith('engine listening on ')) break;
  }
  const url = /^engine listening on (http:\/\/\S+) /.exec(lines.at(-1) ?? '')?.[1];
  if (!url) throw new Error(`no listening line in: ${lines.join('\n')}`);
  return { child, lines, url };
}

async function logIn(url: string, user: string, password: string) {
  const session = sessionSet(
    await raw(url, 'POST', '/resources/json/service/session', {
      json: apiSession({ major: 1, minor: 0, micro: 0 }),
    }),
  );
  return raw(url, 'POST', '/resources/json/service/login', {
    session,
    json: { type: 'LoginRequest', username: user, password },
  });
}

test('without ENGINE_ADMIN_PASSWORD it prints a generated one, once, that logs in; SIGTERM exits 0', async () => {
  const { child, lines, url } = await startMain({
    ENGINE_ADMIN_USER: 'root',
    ENGINE_API_VERSIONS: '1.0.0',
  });
  expect(lines).toHaveLength(2);
  const password = /^NEWLY GENERATED ENGINE ADMIN PASSWORD for root: (\S{24})$/.exec(
    lines[0]!,
  )?.[1];
  expect(password).toBeDefined();
  expect(lines[1]).toBe(`engine listening on ${url} (API versions 1.0.0)`);
  expect((await logIn(url, 'root', password!)).status).toBe(200);
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  expect(await exited).toEqual([0, null]);
});

test('with ENGINE_ADMIN_PASSWORD it prints no password; SIGINT exits 0', async () => {
  const { child, lines, url } = await startMain({ ENGINE_ADMIN_PASSWORD: 'given password' });
  expect(lines).toHaveLength(1);
  expect((await logIn(url, 'admin', 'given password')).status).toBe(200);
  const exited = once(child, 'exit');
  child.kill('SIGINT');
  expect(await exited).toEqual([0, null]);
});
