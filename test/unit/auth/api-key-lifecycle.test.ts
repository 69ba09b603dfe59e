import { describe, expect, test } from 'vitest';
import { ApiKeyVerifier } from '../../../sidecar/auth/api-key-verifier.js';
import { validUntil } from '../../../sidecar/auth/decision.js';
import { hashSecret } from '../../../sidecar/keys/api-key.js';
import { directoryOf, row } from '../support/clients.js';

const NOW = 1_800_000_000_000;
const NEW = 'N'.repeat(43);
const OLD = 'O'.repeat(43);
const at = (ms: number) => new Date(ms);

function verifier(options: Parameters<typeof row>[1], now = NOW) {
  return new ApiKeyVerifier(directoryOf([row(1, options)]), () => now);
}

describe('API keys: expiry and rotation', () => {
  test('the current secret until expires_at (exclusive); valid until that second', async () => {
    const v = verifier({ secret: NEW, expiresAt: at(NOW + 1_999) });
    expect(await v.verify(`1.${NEW}`)).toMatchObject({ ok: true, validUntil: 1_800_000_001 });
    const expired = verifier({ secret: NEW, expiresAt: at(NOW) });
    expect(await expired.verify(`1.${NEW}`)).toEqual({
      ok: false,
      code: 'API_CLIENT_EXPIRED',
      message: 'The API client has expired.',
      scheme: 'apk',
      clientRow: 1,
      // nginx keeps the expiry and refuses the right secret from then on by itself.
      keyRecord: expect.objectContaining({ kind: 'known', id: 1, expiresAt: NOW / 1000 }),
    });
    // A wrong secret says nothing about expiry.
    expect(await expired.verify(`1.${OLD}`)).toMatchObject({ code: 'INVALID_API_KEY' });
  });

  test('the previous secret until its grace end, and a decision about it never outlives that', async () => {
    const options = { secret: NEW, previousSecret: OLD, previousKeyExpiresAt: at(NOW + 60_000) };
    expect(await verifier(options).verify(`1.${OLD}`)).toMatchObject({
      ok: true,
      validUntil: 1_800_000_060,
    });
    // Any other secret is still refused during the grace period.
    expect(await verifier(options).verify(`1.${'W'.repeat(43)}`)).toMatchObject({
      code: 'INVALID_API_KEY',
    });
    // nginx is told the previous secret's hash and its grace end, to the millisecond.
    expect((await verifier(options).verify(`1.${OLD}`)).keyRecord).toMatchObject({
      previous: { hash: hashSecret(OLD), until: (NOW + 60_000) / 1000 },
    });
    // A grace period without a previous secret accepts nothing either.
    const noPrevious = { secret: NEW, previousKeyExpiresAt: at(NOW + 60_000) };
    expect(await verifier(noPrevious).verify(`1.${OLD}`)).toMatchObject({
      code: 'INVALID_API_KEY',
    });
    // The current secret is not bound by the old one's grace.
    expect(await verifier(options).verify(`1.${NEW}`)).toMatchObject({ ok: true });
    const newDecision = await verifier(options).verify(`1.${NEW}`);
    expect(newDecision.ok && newDecision.validUntil).toBeUndefined();
    expect(await verifier(options, NOW + 60_000).verify(`1.${OLD}`)).toMatchObject({
      code: 'INVALID_API_KEY',
    });
    // Expiry before the grace end wins.
    const both = { ...options, expiresAt: at(NOW + 30_000) };
    expect(await verifier(both).verify(`1.${OLD}`)).toMatchObject({ validUntil: 1_800_000_030 });
  });

  test('a previous hash without a grace end is never accepted', async () => {
    const v = verifier({ secret: NEW, previousSecret: OLD, previousKeyExpiresAt: null });
    expect(await v.verify(`1.${OLD}`)).toMatchObject({ code: 'INVALID_API_KEY', clientRow: 1 });
  });

  test('validUntil: the earliest time, in whole seconds rounded down; none given, none', () => {
    expect(validUntil([])).toBeUndefined();
    expect(validUntil([undefined, undefined])).toBeUndefined();
    expect(validUntil([5_999, 3_001, undefined])).toBe(3);
    expect(validUntil([undefined, 7_000])).toBe(7);
  });
});
