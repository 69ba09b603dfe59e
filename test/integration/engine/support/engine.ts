import { afterEach } from 'vitest';
import { type EngineOptions, type RunningEngine, startEngine } from '../../../../engine/index.js';
import { raw, sessionSet } from './raw-http.js';

export const ADMIN_PASSWORD = 'correct horse battery staple';

const running: RunningEngine[] = [];

// Every engine a test starts is closed after it, pass or fail.
afterEach(async () => {
  await Promise.all(running.splice(0).map((e) => e.close()));
});

/** Starts a real engine on a free loopback port, closed after the test. */
export async function engine(options: EngineOptions = {}): Promise<RunningEngine> {
  const started = await startEngine({ adminPassword: ADMIN_PASSWORD, ...options });
  running.push(started);
  return started;
}

/** A clock the test moves by hand. */
export function manualClock(start = Date.UTC(2026, 10, 22)) {
  let now = start;
  return {
    now: () => now,
    advance: (ms: number) => {
      now += ms;
    },
  };
}

export interface Version {
  major: number;
  minor: number;
  micro: number;
}

export function apiSession(v: Version, extra: Record<string, unknown> = {}) {
  return { type: 'APISession', version: { type: 'APIVersion', ...v }, ...extra };
}

/** Opens a session at `v` (default 2.1.0) and returns its cookie value. */
export async function openSession(e: RunningEngine, v: Version = { major: 2, minor: 1, micro: 0 }) {
  const answer = await raw(e.url, 'POST', '/resources/json/service/session', {
    json: apiSession(v),
  });
  const cookie = sessionSet(answer);
  if (answer.status !== 200 || cookie === undefined) {
    throw new Error(`session not opened: ${answer.status} ${answer.text}`);
  }
  return cookie;
}

/** Logs the session in and returns the new cookie value. */
export async function login(
  e: RunningEngine,
  session: string,
  username: string,
  password: string,
  target?: string,
) {
  const answer = await raw(e.url, 'POST', '/resources/json/service/login', {
    session,
    json: { type: 'LoginRequest', username, password, ...(target ? { target } : {}) },
  });
  const cookie = sessionSet(answer);
  if (answer.status !== 200 || cookie === undefined) {
    throw new Error(`login failed: ${answer.status} ${answer.text}`);
  }
  return cookie;
}

/** A session logged in as the administrator, at `v`. */
export async function adminSession(e: RunningEngine, v?: Version): Promise<string> {
  return login(e, await openSession(e, v), e.adminUser, ADMIN_PASSWORD);
}

/** Creates a user through the API as the administrator; returns nothing, throws on failure. */
export async function createUser(e: RunningEngine, admin: string, user: Record<string, unknown>) {
  const answer = await raw(e.url, 'POST', '/resources/json/service/user', {
    session: admin,
    json: { type: 'User', ...user },
  });
  if (answer.status !== 200) throw new Error(`user not created: ${answer.status} ${answer.text}`);
  return answer.json.result;
}

/** Asserts the shape of an ErrorResult and returns its error. */
export function errorOf(answer: { json: unknown }) {
  const body = answer.json as { type: string; status: string; error: Record<string, unknown> };
  if (body?.type !== 'ErrorResult') throw new Error(`not an ErrorResult: ${JSON.stringify(body)}`);
  return body.error as {
    id: string;
    details: string;
    action: string | null;
    diagnoses: { field: string; message: string }[];
  };
}
