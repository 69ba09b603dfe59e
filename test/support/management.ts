import type { Agent } from 'node:http';
import { expect } from 'vitest';
import { http } from './http.js';
import { apk } from './sidecar.js';

export const CLIENTS = '/v1/management/api-clients';

/**
 * Creates an API client through the management API and returns its id and key; over `agent`'s
 * kept-alive connection when given, else a connection of its own.
 */
export async function createClient(
  baseUrl: string,
  adminKey: string,
  body: Record<string, unknown>,
  tls?: Record<string, unknown>,
  agent?: Agent,
): Promise<{ id: number; token: string }> {
  const res = await http(`${baseUrl}${CLIENTS}`, {
    method: 'POST',
    headers: apk(adminKey),
    json: body,
    ...(tls ? { tls } : {}),
    ...(agent ? { agent } : {}),
  });
  expect(res.status, res.text).toBe(201);
  const out = res.json as { api_key_id: number; token?: string };
  return { id: out.api_key_id, token: out.token ?? '' };
}

let counter = 0;
/** A name no other test in this run uses. */
export function uniqueName(prefix = 'client'): string {
  counter += 1;
  return `${prefix}-${process.pid}-${Date.now()}-${counter}`;
}
