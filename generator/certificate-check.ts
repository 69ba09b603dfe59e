import { createPrivateKey, type KeyObject, X509Certificate } from 'node:crypto';

/** What a supplied (or earlier generated) certificate is checked against. */
export interface CertificateFiles {
  certificatePem: string;
  keyPem: string;
  /** Shown in every problem, so the operator knows which file to fix. */
  certificateFile: string;
  keyFile: string;
}

function commonNames(cert: X509Certificate): string[] {
  return cert.subject
    .split('\n')
    .filter((line) => line.startsWith('CN='))
    .map((line) => line.slice(3));
}

/** DNS names of the SAN extension; Node quotes values holding a comma as JSON strings. */
function dnsNames(cert: X509Certificate): string[] {
  const names: string[] = [];
  const pattern = /(?:^|, )DNS:("(?:[^"\\]|\\.)*"|[^,]*)/g;
  for (const match of (cert.subjectAltName ?? '').matchAll(pattern)) {
    const value = match[1]!;
    names.push(value.startsWith('"') ? (JSON.parse(value) as string) : value);
  }
  return names;
}

/**
 * Checks a certificate against its key, the FQDN and the clock (spec 5.4.3); returns every
 * problem found, each naming its file, or an empty list. Names compare case-insensitively
 * and exactly: the spec asks for CN and SAN to *equal* the FQDN, so wildcards do not count.
 */
export function certificateProblems(files: CertificateFiles, fqdn: string, now: Date): string[] {
  const problems: string[] = [];
  let cert: X509Certificate | undefined;
  let key: KeyObject | undefined;
  try {
    cert = new X509Certificate(files.certificatePem);
  } catch (err) {
    problems.push(
      `${files.certificateFile}: not a PEM X.509 certificate (${(err as Error).message})`,
    );
  }
  try {
    key = createPrivateKey(files.keyPem);
  } catch (err) {
    problems.push(
      `${files.keyFile}: not an unencrypted PEM private key (${(err as Error).message})`,
    );
  }
  if (cert === undefined) return problems;
  if (key !== undefined && !cert.checkPrivateKey(key)) {
    problems.push(`${files.keyFile}: does not match the certificate ${files.certificateFile}`);
  }
  const wanted = fqdn.toLowerCase();
  const cns = commonNames(cert);
  if (!cns.some((cn) => cn.toLowerCase() === wanted)) {
    problems.push(
      `${files.certificateFile}: common name is ${cns.length ? cns.map((c) => `"${c}"`).join(', ') : 'missing'}, expected "${fqdn}"`,
    );
  }
  const sans = dnsNames(cert);
  if (!sans.some((san) => san.toLowerCase() === wanted)) {
    problems.push(
      `${files.certificateFile}: no DNS subject alternative name "${fqdn}" (has ${sans.length ? sans.join(', ') : 'none'})`,
    );
  }
  const notBefore = new Date(cert.validFrom);
  const notAfter = new Date(cert.validTo);
  if (now.getTime() > notAfter.getTime()) {
    problems.push(`${files.certificateFile}: expired on ${notAfter.toISOString()}`);
  } else if (now.getTime() < notBefore.getTime()) {
    problems.push(`${files.certificateFile}: not valid before ${notBefore.toISOString()}`);
  }
  return problems;
}
