import { X509Certificate } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, stat, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import {
  CertificateError,
  createSelfSignedCertificate,
  ensureConfigDir,
  LAYOUT,
  parseSettings,
  renderConfigDir,
  type Settings,
} from '../../../generator/index.js';
import { opensslCertificate } from '../../support/openssl.js';

const homes: string[] = [];
afterAll(async () => {
  for (const home of homes) await rm(home, { recursive: true, force: true });
});

async function freshDir(): Promise<string> {
  const home = await mkdtemp(join(tmpdir(), 'gw-configdir-'));
  homes.push(home);
  return join(home, 'config');
}

function settingsFor(dir: string, fqdn = 'gw.example.com'): Settings {
  return parseSettings({ fqdn, config_dir: dir });
}

async function allFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name).slice(dir.length + 1))
    .sort();
}

const ALL = [
  LAYOUT.defaultConf,
  LAYOUT.certificate,
  LAYOUT.key,
  LAYOUT.sslConf,
  LAYOUT.sidecarProof,
].sort();

describe('ensureConfigDir', () => {
  test('completes an empty directory: both templates and a certificate for the FQDN', async () => {
    const dir = await freshDir();
    const result = await ensureConfigDir(dir, settingsFor(dir));
    expect(result.written.sort()).toEqual(ALL);
    expect(await allFiles(dir)).toEqual(ALL);
    const cert = new X509Certificate(await readFile(join(dir, LAYOUT.certificate)));
    expect(cert.subject).toBe('CN=gw.example.com');
    expect((await stat(join(dir, LAYOUT.key))).mode & 0o777).toBe(0o600);
    expect((await stat(join(dir, LAYOUT.certificate))).mode & 0o777).toBe(0o644);
  });

  test('a second run keeps every file byte for byte, the certificate included', async () => {
    const dir = await freshDir();
    await ensureConfigDir(dir, settingsFor(dir));
    const before = await Promise.all(ALL.map((f) => readFile(join(dir, f), 'utf8')));
    const result = await ensureConfigDir(dir, settingsFor(dir));
    expect(result.written).toEqual([]);
    expect(result.kept.sort()).toEqual(ALL);
    expect(await Promise.all(ALL.map((f) => readFile(join(dir, f), 'utf8')))).toEqual(before);
  });

  test('keeps a hand-edited default.conf and writes only what is missing', async () => {
    const dir = await freshDir();
    await ensureConfigDir(dir, settingsFor(dir));
    const edited = '# my own\n';
    await writeFile(join(dir, LAYOUT.defaultConf), edited);
    await unlink(join(dir, LAYOUT.sslConf));
    const result = await ensureConfigDir(dir, settingsFor(dir));
    expect(result.written).toEqual([LAYOUT.sslConf]);
    expect(await readFile(join(dir, LAYOUT.defaultConf), 'utf8')).toBe(edited);
  });

  test('two fresh directories get different certificates', async () => {
    const [a, b] = [await freshDir(), await freshDir()];
    await ensureConfigDir(a, settingsFor(a));
    await ensureConfigDir(b, settingsFor(b));
    const [ca, cb] = await Promise.all(
      [a, b].map((d) => readFile(join(d, LAYOUT.certificate), 'utf8')),
    );
    expect(ca).not.toBe(cb);
  });

  test('a supplied certificate for another FQDN: an error naming it, and nothing written', async () => {
    const dir = await freshDir();
    await ensureConfigDir(dir, settingsFor(dir, 'old.example.com'));
    await unlink(join(dir, LAYOUT.defaultConf));
    const error = await ensureConfigDir(dir, settingsFor(dir, 'new.example.com')).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(CertificateError);
    expect((error as CertificateError).message).toContain(join(dir, LAYOUT.certificate));
    expect((error as CertificateError).message).toContain('expected "new.example.com"');
    expect(await allFiles(dir)).not.toContain(LAYOUT.defaultConf);
  });

  test('a key without its certificate is an error naming the missing file', async () => {
    const dir = await freshDir();
    await ensureConfigDir(dir, settingsFor(dir));
    await unlink(join(dir, LAYOUT.certificate));
    await expect(ensureConfigDir(dir, settingsFor(dir))).rejects.toThrow(
      `${join(dir, LAYOUT.certificate)}: missing while its key`,
    );
    expect(await allFiles(dir)).not.toContain(LAYOUT.certificate);
  });

  test("an operator's expired certificate is refused (clock frozen past its end)", async () => {
    const dir = await freshDir();
    await ensureConfigDir(dir, settingsFor(dir));
    const supplied = await opensslCertificate(dirname(dir), 'supplied', [
      ...['-newkey', 'rsa:2048', '-days', '1', '-subj', '/CN=gw.example.com'],
      ...['-addext', 'subjectAltName=DNS:gw.example.com'],
    ]);
    await writeFile(join(dir, LAYOUT.certificate), supplied.certificatePem);
    await writeFile(join(dir, LAYOUT.key), supplied.keyPem);
    await expect(
      ensureConfigDir(dir, settingsFor(dir), { now: new Date('2040-01-01T00:00:00Z') }),
    ).rejects.toThrow(/nginx\.crt: expired on/);
  });

  test('a supplied certificate and key that fit are kept as they are', async () => {
    const dir = await freshDir();
    await ensureConfigDir(dir, settingsFor(dir));
    const supplied = createSelfSignedCertificate('gw.example.com');
    await writeFile(join(dir, LAYOUT.certificate), supplied.certificatePem);
    await writeFile(join(dir, LAYOUT.key), supplied.keyPem);
    await ensureConfigDir(dir, settingsFor(dir));
    expect(await readFile(join(dir, LAYOUT.certificate), 'utf8')).toBe(supplied.certificatePem);
  });

  test('leaves no temporary files behind', async () => {
    const dir = await freshDir();
    await ensureConfigDir(dir, settingsFor(dir));
    await ensureConfigDir(dir, settingsFor(dir));
    await renderConfigDir(dir, settingsFor(dir));
    expect(await allFiles(dir)).toEqual(ALL);
  });
});

describe('renderConfigDir', () => {
  test('replaces the rendered files but never the certificate', async () => {
    const dir = await freshDir();
    await ensureConfigDir(dir, settingsFor(dir));
    const certificate = await readFile(join(dir, LAYOUT.certificate), 'utf8');
    await writeFile(join(dir, LAYOUT.defaultConf), '# stale\n');
    const result = await renderConfigDir(
      dir,
      parseSettings({ fqdn: 'gw.example.com', config_dir: dir, https_port: 9443 }),
    );
    expect(result.written.sort()).toEqual([LAYOUT.defaultConf, LAYOUT.sslConf].sort());
    expect(await readFile(join(dir, LAYOUT.defaultConf), 'utf8')).toContain(
      'listen 9443 ssl http2;',
    );
    expect(await readFile(join(dir, LAYOUT.certificate), 'utf8')).toBe(certificate);
  });
});
