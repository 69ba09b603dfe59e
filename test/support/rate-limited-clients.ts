import { expect } from 'vitest';
import { CLIENTS, uniqueName } from './management.js';
import { apk } from './sidecar.js';
import type { Stack } from './stack.js';
import { callStack } from './stack-http.js';

export type RateLimit = { requests: number; per_seconds: number };

/** A management request to `stack` as its admin. */
export function manageStack(stack: Stack, method: string, path: string, json?: unknown) {
  return callStack(stack, path, {
    method,
    headers: apk(stack.adminKey),
    ...(json === undefined ? {} : { json }),
  });
}

/**
 * A new client with an API key, created through `stack`, limited to `rateLimit` (null: none).
 */
export async function createLimitedClient(
  stack: Stack,
  prefix: string,
  rateLimit: RateLimit | null,
): Promise<{ id: number; token: string }> {
  const res = await manageStack(stack, 'POST', CLIENTS, {
    name: uniqueName(prefix),
    is_admin: false,
    generate_api_key: true,
    ...(rateLimit ? { rate_limit: rateLimit } : {}),
  });
  expect(res.status, res.text).toBe(201);
  const body = res.json as { api_key_id: number; token: string };
  return { id: body.api_key_id, token: body.token };
}

/**
 * Windows are whole multiples of their length in Unix time (as nginx counts them): waits until
 * at most `within` ms of the current window have passed, so a burst stays in one window.
 */
export async function startOfWindow(seconds: number, within: number): Promise<void> {
  const size = seconds * 1000;
  const into = Date.now() % size;
  if (into > within) await new Promise((r) => setTimeout(r, size - into + 20));
}
