import { createPrivateKey, X509Certificate } from 'node:crypto';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import {
  createSelfSignedCertificate,
  ensureConfigDir,
  isGeneratedCertificate,
  LAYOUT,
  parseSettings,
  renderConfigDir,
  runCli,
} from '../../../generator/index.js';
import { opensslCertificate } from '../../support/openssl.js';

/**
 * Issue 21 item 5: the generated certificate is renewed at start when fewer than 30 days
 * remain; a certificate the operator put there never is. Certificates "generated to expire
 * soon" are made with the generator's own function and a clock set back.
 */

const DAY = 86_400_000;
const FQDN = 'gw.example.com';
const homes: string[] = [];
afterAll(async () => {
  for (const home of homes) await rm(home, { recursive: true, force: true });
});

/** A configuration directory holding `pair` as its certificate and key. */
async function dirWith(pair: { certificatePem: string; keyPem: string }): Promise<string> {
  const home = await mkdtemp(join(tmpdir(), 'gw-renewal-'));
  homes.push(home);
  const dir = join(home, 'config');
  await ensureConfigDir(dir, parseSettings({ fqdn: FQDN, config_dir: dir }));
  await writeFile(join(dir, LAYOUT.certificate), pair.certificatePem);
  await writeFile(join(dir, LAYOUT.key), pair.keyPem, { mode: 0o600 });
  return dir;
}

/** Generated `daysLeft` days before its end. */
const generatedEnding = (daysLeft: number) =>
  createSelfSignedCertificate(FQDN, new Date(Date.now() - (397 - daysLeft) * DAY));

const settingsFor = (dir: string) => parseSettings({ fqdn: FQDN, config_dir: dir });
const served = async (dir: string) =>
  new X509Certificate(await readFile(join(dir, LAYOUT.certificate), 'utf8'));

describe('which certificates count as generated', () => {
  test("the generator's own: yes; an operator's self-signed one for the same name: no", async () => {
    expect(isGeneratedCertificate(createSelfSignedCertificate(FQDN).certificatePem)).toBe(true);
    const home = await mkdtemp(join(tmpdir(), 'gw-renewal-'));
    homes.push(home);
    const operator = await opensslCertificate(home, 'operator', [
      ...['-newkey', 'rsa:2048', '-days', '10', '-subj', `/CN=${FQDN}`],
      ...['-addext', `subjectAltName=DNS:${FQDN}`],
    ]);
    expect(isGeneratedCertificate(operator.certificatePem)).toBe(false);
    expect(isGeneratedCertificate('not a certificate')).toBe(false);
  });
});

describe('renewal at start', () => {
  test('a generated certificate with 10 days left is replaced by one valid 397 days, with its key', async () => {
    const old = generatedEnding(10);
    const dir = await dirWith(old);
    const result = await ensureConfigDir(dir, settingsFor(dir));

    const cert = await served(dir);
    expect(cert.fingerprint256).not.toBe(new X509Certificate(old.certificatePem).fingerprint256);
    const daysLeft = (Date.parse(cert.validTo) - Date.now()) / DAY;
    expect(daysLeft).toBeGreaterThan(396.9);
    expect(daysLeft).toBeLessThanOrEqual(397);
    expect(isGeneratedCertificate(cert.toString())).toBe(true);
    expect(cert.checkPrivateKey(createPrivateKey(await readFile(join(dir, LAYOUT.key))))).toBe(
      true,
    );
    expect((await stat(join(dir, LAYOUT.key))).mode & 0o777).toBe(0o600);
    expect(result.renewed).toEqual([
      {
        file: LAYOUT.certificate,
        previousNotAfter: new Date(new X509Certificate(old.certificatePem).validTo).toISOString(),
        notAfter: new Date(cert.validTo).toISOString(),
      },
    ]);
    expect(result.written).toEqual(expect.arrayContaining([LAYOUT.key, LAYOUT.certificate]));
  });

  test('an expired generated certificate is renewed too, not refused', async () => {
    const dir = await dirWith(generatedEnding(-5));
    const result = await ensureConfigDir(dir, settingsFor(dir));
    expect(result.renewed).toHaveLength(1);
    expect(Date.parse((await served(dir)).validTo)).toBeGreaterThan(Date.now() + 396 * DAY);
  });

  test('a generated certificate with 31 days left is kept byte for byte (render too)', async () => {
    const old = generatedEnding(31);
    const dir = await dirWith(old);
    expect((await ensureConfigDir(dir, settingsFor(dir))).renewed).toEqual([]);
    expect((await renderConfigDir(dir, settingsFor(dir))).renewed).toEqual([]);
    expect(await readFile(join(dir, LAYOUT.certificate), 'utf8')).toBe(old.certificatePem);
  });

  test("an operator's certificate with 10 days left is never touched", async () => {
    const home = await mkdtemp(join(tmpdir(), 'gw-renewal-'));
    homes.push(home);
    const operator = await opensslCertificate(home, 'operator', [
      ...['-newkey', 'rsa:2048', '-days', '10', '-subj', `/CN=${FQDN}`],
      ...['-addext', `subjectAltName=DNS:${FQDN}`],
    ]);
    const dir = await dirWith(operator);
    expect((await ensureConfigDir(dir, settingsFor(dir))).renewed).toEqual([]);
    expect(await readFile(join(dir, LAYOUT.certificate), 'utf8')).toBe(operator.certificatePem);
    expect(await readFile(join(dir, LAYOUT.key), 'utf8')).toBe(operator.keyPem);
  });

  test('gateway-config ensure says what it renewed', async () => {
    const dir = await dirWith(generatedEnding(3));
    const out: string[] = [];
    const status = await runCli(['ensure', dir], {
      env: { GATEWAY_FQDN: FQDN },
      cwd: '/',
      out: (line) => out.push(line),
      err: (line) => out.push(line),
    });
    expect(status).toBe(0);
    expect(out.join('\n')).toMatch(
      /renewed nginx\/ssl\/nginx\.crt: the generated certificate ends \S+ \(fewer than 30 days left\); the new one is valid until \S+/,
    );
  });
});
