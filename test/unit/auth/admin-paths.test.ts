import { describe, expect, test } from 'vitest';
import { requiresAdmin } from '../../../sidecar/auth/admin-paths.js';

const uri = (u: string) => requiresAdmin({ 'x-original-uri': u });

describe('requiresAdmin', () => {
  test('nginx saying so is enough, whatever the URI', () => {
    expect(requiresAdmin({ 'x-gateway-require-admin': 'true' })).toBe(true);
    expect(requiresAdmin({ 'x-gateway-require-admin': 'true', 'x-original-uri': '/reports' })).toBe(
      true,
    );
  });

  test('only the exact value "true" counts as nginx saying so', () => {
    expect(requiresAdmin({ 'x-gateway-require-admin': 'TRUE', 'x-original-uri': '/a' })).toBe(
      false,
    );
    expect(requiresAdmin({ 'x-gateway-require-admin': 'false' })).toBe(false);
  });

  test('without an original URI nothing else requires an admin', () => {
    expect(requiresAdmin({})).toBe(false);
  });

  test.each([
    '/v1/management',
    '/v1/management/',
    '/v1/management/api-clients',
    '/v1/management/api-clients/7?x=1',
    '/v1/management?x',
    '//v1///management//api-clients',
    '/v1/./management/',
    '/v1/x/../management/api-clients',
    '/v1/%6danagement/api-clients',
    '/v1/%6Danagement',
    '/%76%31/management',
    '/V1/Management/api-clients',
    '/x/../../v1/management',
    'v1/management',
    '/v1/management/%',
  ])('%s is a management path', (path) => {
    expect(uri(path)).toBe(true);
  });

  test.each([
    '/',
    '',
    '/v1',
    '/v1/managements',
    '/v1/management-x',
    '/v1/managementx/api-clients',
    '/v2/management',
    '/api/v1/management',
    '/reports?next=/v1/management',
    '/v1/management/../reports',
    '/v1/%2e%2e/v1x/management',
    '/%',
  ])('%s is not a management path', (path) => {
    expect(uri(path)).toBe(false);
  });

  test('a URI header that is not one string is ignored', () => {
    expect(requiresAdmin({ 'x-original-uri': ['/v1/management'] as unknown as string })).toBe(
      false,
    );
  });
});
