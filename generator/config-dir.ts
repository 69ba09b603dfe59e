import { X509Certificate } from 'node:crypto';
import { chown, mkdir, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { type CertificatePair, createSelfSignedCertificate } from './certificate.js';
import { certificateProblems } from './certificate-check.js';
import { type CertificateRenewal, generatedCertificateDue } from './certificate-renewal.js';
import { CertificateError } from './errors.js';
import { createFile, readIfPresent, replaceFile } from './file-writes.js';
import { LAYOUT } from './layout.js';
import { type RenderedFile, renderConfigFiles } from './render.js';
import type { Settings } from './settings-schema.js';
import { ensureProofFile, verifyPresentProof } from './sidecar-proof-file.js';

/** What a render or ensure did, by path relative to the configuration directory. */
export interface ConfigDirResult {
  written: string[];
  kept: string[];
  /** The generated certificate replaced because it was near its end (empty: none). */
  renewed: CertificateRenewal[];
}

export interface ConfigDirOptions {
  /** The clock for certificate validity (tests freeze it). */
  now?: Date;
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
 * Replaces a generated certificate near its end, key first, each file atomically and keeping
 * its owner (an operator's mounted folder stays theirs). nginx is not running yet: prepare runs
 * before it starts, so it never serves a key with the other certificate.
 */
async function renewCertificate(
  dir: string,
  pair: CertificatePair,
  previousNotAfter: Date,
  result: ConfigDirResult,
): Promise<void> {
  for (const [relative, content, mode] of [
    [LAYOUT.key, pair.keyPem, 0o600],
    [LAYOUT.certificate, pair.certificatePem, 0o644],
  ] as const) {
    const path = join(dir, relative);
    const before = await stat(path).catch(() => undefined);
    await replaceFile(path, content, mode);
    if (before && process.geteuid?.() === 0) await chown(path, before.uid, before.gid);
    result.written.push(relative);
  }
  result.renewed.push({
    file: LAYOUT.certificate,
    previousNotAfter: previousNotAfter.toISOString(),
    notAfter: new Date(new X509Certificate(pair.certificatePem).validTo).toISOString(),
  });
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
  const present = await readIfPresent(join(dir, LAYOUT.certificate));
  const dueSince = present === undefined ? null : generatedCertificateDue(present, now);
  const certificateState =
    dueSince !== null ? 'due' : await verifyPresentCertificate(dir, settings.fqdn, now);
  const pair =
    certificateState === 'valid' ? undefined : createSelfSignedCertificate(settings.fqdn, now);
  await verifyPresentProof(dir);

  const result: ConfigDirResult = { written: [], kept: [], renewed: [] };
  for (const relative of [LAYOUT.defaultConf, LAYOUT.sslConf, LAYOUT.certificate]) {
    await mkdir(dirname(join(dir, relative)), { recursive: true });
  }
  if (pair === undefined) result.kept.push(LAYOUT.key, LAYOUT.certificate);
  else if (dueSince !== null) await renewCertificate(dir, pair, dueSince, result);
  else await writeCertificate(dir, pair, settings.fqdn, now, result);
  // Made once, in render and ensure alike, and never rewritten by either: a new secret would
  // shut out the nginx or the sidecar still holding the old one.
  if (await ensureProofFile(dir)) result.written.push(LAYOUT.sidecarProof);
  else result.kept.push(LAYOUT.sidecarProof);
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
 * Renders the settings into `dir`: default.conf and ssl.conf are replaced; the sidecar's proof
 * secret is created if missing and otherwise kept as it is; the certificate is created if missing and otherwise checked, replaced only when it is the generated one and
 * fewer than 30 days remain.
 */
export function renderConfigDir(
  dir: string,
  settings: Settings,
  options: ConfigDirOptions = {},
): Promise<ConfigDirResult> {
  return writeConfigDir(dir, settings, 'replace', options);
}

/**
 * Completes `dir` without overwriting anything but a generated certificate near its end: only
 * missing files are rendered, a missing certificate and key and a missing proof secret are created, a present certificate
 * is checked against the FQDN.
 */
export function ensureConfigDir(
  dir: string,
  settings: Settings,
  options: ConfigDirOptions = {},
): Promise<ConfigDirResult> {
  return writeConfigDir(dir, settings, 'keep', options);
}
