import { chmod, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { listen, SOCKET_MODE } from '../../../common/listen.js';
import { http } from '../../support/http.js';

let dir: string;
let server: Server;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'listen-'));
  server = createServer((_req, res) => res.end('ok'));
});
afterEach(async () => {
  await new Promise((resolve) => server.close(resolve));
  await rm(dir, { recursive: true, force: true });
});

const modeOf = async (path: string) => (await stat(path)).mode & 0o777;

describe('listen on a unix socket', () => {
  test('the socket is owner-only from the moment it accepts connections, not after', async () => {
    const socket = join(dir, 's.sock');
    // 'listening' is the first moment a client can connect: the mode must be final by then.
    const atListening = new Promise<number>((resolve) => {
      server.once('listening', () => {
        stat(socket).then((s) => resolve(s.mode & 0o777));
      });
    });
    expect(await listen(server, { socket })).toBe(`unix:${socket}`);
    expect(await atListening).toBe(SOCKET_MODE);
    expect(await modeOf(socket)).toBe(SOCKET_MODE);
  });

  test('a mode given once it answers (the native runner opening it to nginx) is never undone', async () => {
    const socket = join(dir, 's.sock');
    const listening = listen(server, { socket });
    // As the runner does: connect until it answers, then open it to the group.
    let answered = false;
    while (!answered) {
      answered = await http(`http://localhost/`, { socketPath: socket })
        .then((res) => res.status === 200)
        .catch(() => false);
    }
    await chmod(socket, 0o660);
    await listening;
    await new Promise((r) => setTimeout(r, 50));
    expect(await modeOf(socket)).toBe(0o660);
  });

  test('a socket file left by a process that died is replaced', async () => {
    const socket = join(dir, 's.sock');
    await writeFile(socket, 'stale');
    await listen(server, { socket });
    expect((await stat(socket)).isSocket()).toBe(true);
  });

  test('the umask of the process is what it was before', async () => {
    // Read by setting and restoring it (process.umask() without an argument is deprecated).
    const current = () => {
      const mask = process.umask(0o022);
      process.umask(mask);
      return mask;
    };
    const before = current();
    await listen(server, { socket: join(dir, 's.sock') });
    expect(current()).toBe(before);
  });
});
