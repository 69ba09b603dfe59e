import { X509Certificate } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { createSelfSignedCertificate, isGeneratedCertificate } from '../../generator/index.js';
import { launchNativeGateway, type NativeGatewayProcess } from '../support/native-gateway.js';
import { handshake } from '../support/tls.js';

/**
 * Issue 21 item 5 on the native stack (`npm start`): a home whose generated certificate has
 * five days left starts with a new one, valid 397 days, served by nginx, and says so.
 */

const DAY = 86_400_000;
let home: string;
let gw: NativeGatewayProcess | undefined;

afterAll(async () => {
  await gw?.stop();
  if (home) await rm(home, { recursive: true, force: true });
});

test('a generated certificate with 5 days left is renewed at start, logged, and served', async () => {
  home = await mkdtemp(join(tmpdir(), 'gw-renew-'));
  const ssl = join(home, 'config', 'nginx', 'ssl');
  await mkdir(ssl, { recursive: true });
  const old = createSelfSignedCertificate('localhost', new Date(Date.now() - 392 * DAY));
  await writeFile(join(ssl, 'nginx.key'), old.keyPem, { mode: 0o600 });
  await writeFile(join(ssl, 'nginx.crt'), old.certificatePem);
  const oldEnd = new Date(new X509Certificate(old.certificatePem).validTo).toISOString();

  gw = await launchNativeGateway({ home });

  expect(gw.output()).toMatch(
    new RegExp(
      `Certificate renewed nginx/ssl/nginx\\.crt: the generated certificate ends ${oldEnd.replaceAll('.', '\\.')} \\(fewer than 30 days left\\); the new one is valid until \\S+`,
    ),
  );
  const onDisk = await readFile(join(ssl, 'nginx.crt'), 'utf8');
  expect(onDisk).not.toBe(old.certificatePem);
  expect(isGeneratedCertificate(onDisk)).toBe(true);
  // What nginx serves is the new certificate, trusted as its own CA.
  const hello = await handshake(gw.port, 'TLSv1.3', onDisk);
  expect(hello.ok).toBe(true);
  if (!hello.ok) return;
  expect(hello.certificate.fingerprint256).toBe(new X509Certificate(onDisk).fingerprint256);
  const daysLeft = (Date.parse(hello.certificate.valid_to) - Date.now()) / DAY;
  expect(daysLeft).toBeGreaterThan(396);
  expect(daysLeft).toBeLessThanOrEqual(397);
}, 180_000);
