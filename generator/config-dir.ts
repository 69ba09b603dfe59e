import { mkdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { type CertificatePair, createSelfSignedCertificate } from './certificate.js';
import { certificateProblems } from './certificate-check.js';
import { CertificateError } from './errors.js';
import { createFile, replaceFile } from './file-writes.js';
import { LAYOUT } from './layout.js';
import { type RenderedFile, renderConfigFiles } from './render.js';
import type { Settings } from './settings-schema.js';

/** What a render or ensure did, by path relative to the configuration directory. */
export interface ConfigDirResult {
  written: string[];
  kept: string[];
}

export interface ConfigDirOptions {
  /** The clock for certificate validity (tests freeze it). */
  now?: Date;
}

async function readIfPresent(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** Checks the certificate and key on disk against the FQDN; throws CertificateError naming files. */
async function verifyPresentCertificate(
  dir: string,
  fqdn: string,
  now: Date,
): Promise<'absent' | 'valid'> {
  const certificateFile = join(dir, LAYOUT.certificate);
  const keyFile = join(dir, LAYOUT.key);
  const [certificatePem, keyPem] = [
    await readIfPresent(certificateFile),
    await readIfPresent(keyFile),
  ];
  if (certificatePem === undefined && keyPem === undefined) return 'absent';
  if (certificatePem === undefined) {
    throw new CertificateError([
      `${certificateFile}: missing while its key ${keyFile} exists; supply the certificate, or remove the key to have a new pair created`,
    ]);
  }
  if (keyPem === undefined) {
    throw new CertificateError([
      `${keyFile}: missing while the certificate ${certificateFile} exists; supply its key, or remove the certificate to have a new pair created`,
    ]);
  }
  const problems = certificateProblems(
    { certificatePem, keyPem, certificateFile, keyFile },
    fqdn,
    now,
  );
  if (problems.length > 0) throw new CertificateError(problems);
  return 'valid';
}

/** Writes a new pair without overwriting: the key (0600) first, so a certificate never lacks one. */
async function writeCertificate(
  dir: string,
  pair: CertificatePair,
  fqdn: string,
  now: Date,
  result: ConfigDirResult,
): Promise<void> {
  const keyCreated = await createFile(join(dir, LAYOUT.key), pair.keyPem, 0o600);
  const certificateCreated =
    keyCreated && (await createFile(join(dir, LAYOUT.certificate), pair.certificatePem, 0o644));
  if (certificateCreated) {
    result.written.push(LAYOUT.key, LAYOUT.certificate);
    return;
  }
  // Another process completed the directory at the same moment: keep its pair if it is sound.
  await verifyPresentCertificate(dir, fqdn, now);
  result.kept.push(LAYOUT.key, LAYOUT.certificate);
}

/**
 * Everything is decided and generated before the first write: invalid settings or an
 * unusable certificate leave the directory untouched.
 */
async function writeConfigDir(
  dir: string,
  settings: Settings,
  mode: 'replace' | 'keep',
  options: ConfigDirOptions,
): Promise<ConfigDirResult> {
  const now = options.now ?? new Date();
  const files: RenderedFile[] = renderConfigFiles(settings);
  const certificateState = await verifyPresentCertificate(dir, settings.fqdn, now);
  const pair =
    certificateState === 'absent' ? createSelfSignedCertificate(settings.fqdn, now) : undefined;

  const result: ConfigDirResult = { written: [], kept: [] };
  for (const relative of [LAYOUT.defaultConf, LAYOUT.sslConf, LAYOUT.certificate]) {
    await mkdir(dirname(join(dir, relative)), { recursive: true });
  }
  if (pair !== undefined) await writeCertificate(dir, pair, settings.fqdn, now, result);
  else result.kept.push(LAYOUT.key, LAYOUT.certificate);
  for (const file of files) {
    const path = join(dir, file.path);
    if (mode === 'replace') {
      await replaceFile(path, file.content);
      result.written.push(file.path);
    } else if (await createFile(path, file.content)) {
      result.written.push(file.path);
    } else {
      result.kept.push(file.path);
    }
  }
  return result;
}

/**
 * Renders the settings into `dir`: default.conf and ssl.conf are replaced; the certificate is
 * created if missing and otherwise checked, never replaced.
 */
export function renderConfigDir(
  dir: string,
  settings: Settings,
  options: ConfigDirOptions = {},
): Promise<ConfigDirResult> {
  return writeConfigDir(dir, settings, 'replace', options);
}

/**
 * Completes `dir` without overwriting anything: only missing files are rendered, a missing
 * certificate and key are created, a present certificate is checked against the FQDN.
 */
export function ensureConfigDir(
  dir: string,
  settings: Settings,
  options: ConfigDirOptions = {},
): Promise<ConfigDirResult> {
  return writeConfigDir(dir, settings, 'keep', options);
}
