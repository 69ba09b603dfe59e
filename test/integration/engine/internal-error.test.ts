import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect, test } from 'vitest';
import { createApp } from '../../../engine/app.js';
import { SessionStore } from '../../../engine/sessions/store.js';
import { resolveSettings } from '../../../engine/settings.js';
import { UserStore } from '../../../engine/users/store.js';
import { raw } from './support/raw-http.js';

test('an unexpected failure answers a bare 500 ErrorResult, logs the cause, and the engine goes on', async () => {
  const logged: string[] = [];
  const now = Date.now;
  const app = createApp(
    {
      settings: resolveSettings({}),
      sessions: new SessionStore({ idleMs: 60_000, maxSessions: 10, now }),
      users: new UserStore(now),
      now,
    },
    [
      {
        method: 'GET',
        path: '/broken',
        summary: 'fails',
        access: 'none',
        result: 'HTML',
        handler: () => {
          throw new Error('secret internal detail');
        },
      },
    ],
    (line) => logged.push(line),
  );
  const server = createServer(app).listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    const answer = await raw(url, 'GET', '/broken');
    expect(answer.status).toBe(500);
    expect(answer.json).toEqual({
      type: 'ErrorResult',
      status: 'ERROR',
      error: {
        type: 'APIError',
        details: 'The engine failed to answer this call.',
        action: null,
        id: 'exception.webservices.internal',
        commandOutput: null,
        diagnoses: [],
      },
    });
    expect(answer.text).not.toContain('secret');
    expect(logged).toHaveLength(1);
    expect(logged[0]).toContain('secret internal detail');
    expect((await raw(url, 'GET', '/other')).status).toBe(404);
  } finally {
    server.close();
  }
});
