import { expect, test } from 'vitest';
import { http } from './http.js';
import { apk } from './sidecar.js';

export interface SecurityContext {
  baseUrl: string;
  adminKey: string;
  /** A valid key of a non-admin client. */
  userKey: string;
  /** A key whose client has been deleted. */
  deletedKey: string;
}

export interface ProtectedRoute {
  method: string;
  path: string;
  json?: unknown;
}

/**
 * The refusals every protected management route must give, run against each of them
 * (unkey's runSharedRoleTests): no key, malformed key, wrong secret, deleted key, non-admin.
 */
export function sharedSecurityTests(ctx: () => SecurityContext, route: ProtectedRoute): void {
  const call = (headers: Record<string, string>) =>
    http(`${ctx().baseUrl}${route.path}`, {
      method: route.method,
      headers,
      ...(route.json !== undefined ? { json: route.json } : {}),
    });

  const refusals: [string, () => Record<string, string>, number, string][] = [
    ['no Authorization header', () => ({}), 401, 'MISSING_CREDENTIALS'],
    ['a malformed key', () => apk('not-a-key'), 401, 'MALFORMED_CREDENTIALS'],
    [
      'a wrong secret',
      () => apk(`${ctx().userKey.split('.')[0]}.${'A'.repeat(43)}`),
      401,
      'INVALID_API_KEY',
    ],
    ['a deleted key', () => apk(ctx().deletedKey), 401, 'INVALID_API_KEY'],
    ['a non-admin key', () => apk(ctx().userKey), 403, 'FORBIDDEN'],
  ];
  for (const [what, headers, status, code] of refusals) {
    test(`${route.method} ${route.path}: ${what} is refused with ${status}`, async () => {
      const res = await call(headers());
      expect(res.status, res.text).toBe(status);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.json).toEqual({ errors: [expect.objectContaining({ code })] });
      if (status === 401) expect(res.headers['www-authenticate']).toBe('apk');
    });
  }
}
