import { createPrivateKey, generateKeyPairSync, X509Certificate } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { certificateProblems, createSelfSignedCertificate } from '../../../generator/index.js';
import { opensslCertificate } from '../../support/openssl.js';

const NOW = new Date('2026-11-22T12:00:00Z');
const FILES = { certificateFile: '/cfg/nginx/ssl/nginx.crt', keyFile: '/cfg/nginx/ssl/nginx.key' };

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gw-cert-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('the self-signed certificate', () => {
  const pair = createSelfSignedCertificate('gw.example.com', NOW);
  const cert = new X509Certificate(pair.certificatePem);

  test('has CN and a DNS SAN equal to the FQDN, and is a server certificate', () => {
    expect(cert.subject).toBe('CN=gw.example.com');
    expect(cert.issuer).toBe('CN=gw.example.com');
    expect(cert.subjectAltName).toBe('DNS:gw.example.com');
    expect(cert.ca).toBe(false);
    expect(cert.keyUsage).toContain('1.3.6.1.5.5.7.3.1');
  });

  test('is RSA 2048 with its own key, valid from now for 397 days (browsers flag over 398)', () => {
    const key = createPrivateKey(pair.keyPem);
    expect(key.asymmetricKeyType).toBe('rsa');
    expect(key.asymmetricKeyDetails?.modulusLength).toBe(2048);
    expect(cert.checkPrivateKey(key)).toBe(true);
    expect(cert.verify(cert.publicKey)).toBe(true);
    expect(new Date(cert.validFrom).getTime()).toBeLessThan(NOW.getTime());
    expect(new Date(cert.validTo).toISOString()).toBe('2027-12-24T12:00:00.000Z');
    const days = (Date.parse(cert.validTo) - Date.parse(cert.validFrom)) / 86_400_000;
    expect(days).toBeLessThanOrEqual(398);
  });

  test('is unique: another one has another key and serial', () => {
    const other = new X509Certificate(
      createSelfSignedCertificate('gw.example.com', NOW).certificatePem,
    );
    expect(other.serialNumber).not.toBe(cert.serialNumber);
    expect(other.fingerprint256).not.toBe(cert.fingerprint256);
    expect(other.publicKey.equals(cert.publicKey)).toBe(false);
  });

  test('is PEM with Unix line ends', () => {
    expect(pair.certificatePem).toMatch(
      /^-----BEGIN CERTIFICATE-----\n[^\r]+-----END CERTIFICATE-----\n$/,
    );
    expect(pair.keyPem).toMatch(/^-----BEGIN PRIVATE KEY-----\n[^\r]+-----END PRIVATE KEY-----\n$/);
  });

  test('passes its own checks', () => {
    expect(certificateProblems({ ...pair, ...FILES }, 'gw.example.com', NOW)).toEqual([]);
    expect(certificateProblems({ ...pair, ...FILES }, 'GW.Example.com', NOW)).toEqual([]);
  });
});

describe('a supplied certificate is checked', () => {
  const pair = createSelfSignedCertificate('gw.example.com', NOW);

  test('a key of another certificate: names the key file', () => {
    const otherKey = createSelfSignedCertificate('gw.example.com', NOW).keyPem;
    expect(
      certificateProblems({ ...pair, keyPem: otherKey, ...FILES }, 'gw.example.com', NOW),
    ).toEqual([
      '/cfg/nginx/ssl/nginx.key: does not match the certificate /cfg/nginx/ssl/nginx.crt',
    ]);
  });

  test('another FQDN: names the certificate file, its CN and its SANs', () => {
    expect(certificateProblems({ ...pair, ...FILES }, 'api.example.com', NOW)).toEqual([
      '/cfg/nginx/ssl/nginx.crt: common name is "gw.example.com", expected "api.example.com"',
      '/cfg/nginx/ssl/nginx.crt: no DNS subject alternative name "api.example.com" (has gw.example.com)',
    ]);
  });

  test('expired, or not valid yet', () => {
    const later = new Date('2037-01-01T00:00:00Z');
    expect(certificateProblems({ ...pair, ...FILES }, 'gw.example.com', later)).toEqual([
      expect.stringMatching(/^\/cfg\/nginx\/ssl\/nginx\.crt: expired on 2027-12-24T12:00:00/),
    ]);
    const earlier = new Date('2026-11-20T00:00:00Z');
    expect(certificateProblems({ ...pair, ...FILES }, 'gw.example.com', earlier)).toEqual([
      expect.stringMatching(/nginx\.crt: not valid before 2026-11-22T11:00:00/),
    ]);
  });

  test('not PEM at all: both files named', () => {
    const problems = certificateProblems(
      { certificatePem: 'hello', keyPem: 'world', ...FILES },
      'gw.example.com',
      NOW,
    );
    expect(problems).toEqual([
      expect.stringMatching(/^\/cfg\/nginx\/ssl\/nginx\.crt: not a PEM X\.509 certificate/),
      expect.stringMatching(/^\/cfg\/nginx\/ssl\/nginx\.key: not an unencrypted PEM private key/),
    ]);
  });

  test('a passphrase-protected key is refused (nginx would need the passphrase)', () => {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const encrypted = privateKey.export({
      type: 'pkcs8',
      format: 'pem',
      cipher: 'aes-256-cbc',
      passphrase: 'secret',
    }) as string;
    const problems = certificateProblems(
      { ...pair, keyPem: encrypted, ...FILES },
      'gw.example.com',
      NOW,
    );
    expect(problems).toEqual([
      expect.stringMatching(/nginx\.key: not an unencrypted PEM private key/),
    ]);
  });

  test('an EC P-256 certificate with the right names is accepted', async () => {
    const supplied = await opensslCertificate(dir, 'ec', [
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-subj',
      '/O=Example/CN=ec.example.com',
      '-addext',
      'subjectAltName=DNS:www.example.com,DNS:ec.example.com',
      '-days',
      '30',
    ]);
    expect(certificateProblems({ ...supplied, ...FILES }, 'ec.example.com', new Date())).toEqual(
      [],
    );
  });

  test('a certificate without a SAN is refused even when its CN is right', async () => {
    const supplied = await opensslCertificate(dir, 'nosan', [
      '-newkey',
      'rsa:2048',
      '-subj',
      '/CN=old.example.com',
      '-days',
      '30',
    ]);
    expect(certificateProblems({ ...supplied, ...FILES }, 'old.example.com', new Date())).toEqual([
      '/cfg/nginx/ssl/nginx.crt: no DNS subject alternative name "old.example.com" (has none)',
    ]);
  });

  test('a wildcard does not count: the spec asks for the FQDN itself', async () => {
    const supplied = await opensslCertificate(dir, 'wild', [
      '-newkey',
      'rsa:2048',
      '-subj',
      '/CN=*.example.com',
      '-addext',
      'subjectAltName=DNS:*.example.com',
      '-days',
      '30',
    ]);
    expect(
      certificateProblems({ ...supplied, ...FILES }, 'gw.example.com', new Date()),
    ).toHaveLength(2);
  });
});
