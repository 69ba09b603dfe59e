import { createHash } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import {
  identityHeaders,
  keyRecordHeaders,
  keyRecordOf,
} from '../../../sidecar/auth/key-record.js';
import { row } from '../support/clients.js';

const sha = (text: string) => createHash('sha256').update(text).digest();

describe('key records (what nginx may keep about an API key id)', () => {
  test('an id no client has', () => {
    const record = keyRecordOf(41, null);
    expect(record).toEqual({ kind: 'unknown', id: 41 });
    expect(keyRecordHeaders(record)).toEqual({
      'X-Gateway-Key-Record': 'unknown',
      'X-Gateway-Client-Row': '41',
    });
  });

  test('a client with its secret, a rotated-out one in grace, and an expiry: hashes, never secrets', () => {
    const client = row(7, {
      secret: 'current',
      name: 'Zoë ops',
      isAdmin: true,
      expiresAt: new Date(1_800_000_000_123),
    });
    client.previousKeyHash = sha('previous');
    client.previousKeyExpiresAt = new Date(1_700_000_000_500);
    const headers = keyRecordHeaders(keyRecordOf(7, client));
    expect(headers).toEqual({
      'X-Gateway-Key-Record': 'known',
      'X-Gateway-Client-Row': '7',
      'X-Client-Id': '7',
      'X-Client-Name': 'Zo%C3%AB%20ops',
      'X-Client-Is-Admin': 'true',
      'X-Auth-Method': 'apk',
      'X-Gateway-Key-Hash': sha('current').toString('hex'),
      'X-Gateway-Previous-Key-Hash': sha('previous').toString('hex'),
      'X-Gateway-Previous-Key-Until': '1700000000.500',
      'X-Gateway-Expires-At': '1800000000.123',
    });
    expect(JSON.stringify(headers)).not.toContain('current');
  });

  test('a row is made into a record, and a record into headers, once: a batch shares them', () => {
    const client = row(9, { secret: 'shared' });
    const record = keyRecordOf(9, client);
    expect(keyRecordOf(9, client)).toBe(record);
    expect(keyRecordHeaders(record)).toBe(keyRecordHeaders(record));
    // Another read of the same client is another row: its own record, equal in content.
    const again = keyRecordOf(9, row(9, { secret: 'shared' }));
    expect(again).not.toBe(record);
    expect(again).toEqual(record);
  });

  test('a client without a key, or a previous hash without its grace end: nothing about them', () => {
    const client = row(8, { apiClientId: 'robot@idp' });
    client.keyHash = null;
    client.previousKeyHash = sha('previous');
    client.previousKeyExpiresAt = null;
    const record = keyRecordOf(8, client);
    expect(record).toMatchObject({ kind: 'known', keyHash: null, previous: null, expiresAt: null });
    const headers = keyRecordHeaders(record);
    expect(Object.keys(headers).sort()).toEqual(
      [
        'X-Auth-Method',
        'X-Client-Id',
        'X-Client-Is-Admin',
        'X-Client-Name',
        'X-Gateway-Client-Row',
        'X-Gateway-Key-Record',
      ].sort(),
    );
  });

  test('a rate limit travels as "<requests> <per_seconds>" with the record and with a yes', () => {
    const client = row(9, { secret: 's', rateLimit: { requests: 100, perSeconds: 60 } });
    const record = keyRecordOf(9, client);
    expect(keyRecordHeaders(record)['X-Gateway-Rate-Limit']).toBe('100 60');
    expect(
      identityHeaders(
        { id: 9, clientId: 'r', clientName: 'r', isAdmin: false, rateLimit: client.rateLimit },
        'bearer',
      )['X-Gateway-Rate-Limit'],
    ).toBe('100 60');
    const none = identityHeaders(
      { id: 9, clientId: 'r', clientName: 'r', isAdmin: false, rateLimit: null },
      'bearer',
    );
    expect(none).not.toHaveProperty('X-Gateway-Rate-Limit');
  });

  test('permissions travel as their text with the record and with a yes; none, no header', () => {
    const rules = [{ methods: ['GET'], path: '/reports/**' }];
    const client = row(9, { secret: 's', permissions: rules });
    expect(keyRecordHeaders(keyRecordOf(9, client))['X-Gateway-Permissions']).toBe(
      '1 03/reports/**',
    );
    const bearer = { id: 9, clientId: 'r', clientName: 'r', isAdmin: false };
    expect(identityHeaders({ ...bearer, permissions: [] }, 'bearer')['X-Gateway-Permissions']).toBe(
      '0',
    );
    expect(identityHeaders({ ...bearer, permissions: null }, 'bearer')).not.toHaveProperty(
      'X-Gateway-Permissions',
    );
  });
});
