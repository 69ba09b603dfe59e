import type { Request, Response } from 'express';
import { describe, expect, test } from 'vitest';
import { decodePosition, encodePosition } from '../../../sidecar/audit/position-cursor.js';
import { requestContext } from '../../../sidecar/audit/request-context.js';

function context(headers: Record<string, string>, method = 'apk', peer = '10.0.0.9') {
  const req = { headers, socket: { remoteAddress: peer } } as unknown as Request;
  const res = {
    locals: {
      identity: { id: 4, clientId: '4', clientName: 'ops', isAdmin: true },
      authMethod: method,
    },
  } as unknown as Response;
  return requestContext(req, res);
}

describe('requestContext', () => {
  test('the admin, the request id nginx sent and the address nginx saw', () => {
    expect(
      context({ 'x-request-id': '0123456789abcdef0123456789abcdef', 'x-forwarded-for': '::1' }),
    ).toEqual({
      actor: { apiKeyId: 4, name: 'ops', authMethod: 'api_key' },
      requestId: '0123456789abcdef0123456789abcdef',
      sourceAddress: '::1',
    });
    expect(context({}, 'bearer').actor.authMethod).toBe('bearer');
  });

  test('no header: no request id, the peer address; junk is stored as null, never as text', () => {
    expect(context({})).toMatchObject({ requestId: null, sourceAddress: '10.0.0.9' });
    expect(context({ 'x-request-id': 'a b', 'x-forwarded-for': 'evil' })).toMatchObject({
      requestId: null,
      sourceAddress: null,
    });
    expect(context({ 'x-request-id': 'x'.repeat(65) }).requestId).toBeNull();
    expect(context({ 'x-request-id': 'id;drop' }).requestId).toBeNull();
    // The shape nginx keeps from a trusted proxy (a balancer's UUID) is stored as it came.
    expect(context({ 'x-request-id': 'x'.repeat(64) }).requestId).toBe('x'.repeat(64));
    expect(context({ 'x-request-id': 'Ab-1_2.3' }).requestId).toBe('Ab-1_2.3');
    expect(context({ 'x-forwarded-for': '198.51.100.1, 203.0.113.5' }).sourceAddress).toBe(
      '203.0.113.5',
    );
  });
});

describe('position cursors', () => {
  test('round-trip, and refuse another listing, another length, or forged values', () => {
    const text = encodePosition('audit', [42]);
    expect(decodePosition(text, 'audit', 1)).toEqual([42]);
    expect(decodePosition(text, 'failures', 1)).toBeNull();
    expect(decodePosition(text, 'audit', 2)).toBeNull();
    expect(decodePosition(encodePosition('audit', [-1]), 'audit', 1)).toBeNull();
    expect(decodePosition(encodePosition('audit', [1.5]), 'audit', 1)).toBeNull();
    for (const junk of ['', 'not json', '!!!', 'bnVsbA', 'x'.repeat(201)]) {
      expect(decodePosition(junk, 'audit', 1)).toBeNull();
    }
  });
});
