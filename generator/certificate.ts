import { randomBytes } from 'node:crypto';
import forge from 'node-forge';

/** A certificate and its private key, PEM encoded. */
export interface CertificatePair {
  certificatePem: string;
  keyPem: string;
}

// Long enough that a self-signed certificate clients have pinned does not lapse under them;
// an operator who wants rotation supplies their own certificate.
const VALIDITY_YEARS = 10;

/**
 * A unique self-signed server certificate for `fqdn`: RSA 2048 (node-forge issues RSA only;
 * it uses Node's native key generation, so this takes milliseconds), CN and a DNS SAN equal
 * to the FQDN, a random 128-bit serial, SHA-256 signature.
 */
export function createSelfSignedCertificate(fqdn: string, now: Date = new Date()): CertificatePair {
  const keys = forge.pki.rsa.generateKeyPair({ bits: 2048, e: 0x10001 });
  const cert = forge.pki.createCertificate();
  cert.publicKey = keys.publicKey;
  // A leading 0x01..0x7f byte keeps the DER integer positive.
  cert.serialNumber = `${(1 + (randomBytes(1)[0]! % 0x7f)).toString(16).padStart(2, '0')}${randomBytes(15).toString('hex')}`;
  // A little in the past, so a client whose clock is slightly behind accepts it.
  cert.validity.notBefore = new Date(now.getTime() - 60 * 60 * 1000);
  cert.validity.notAfter = new Date(now.getTime());
  cert.validity.notAfter.setUTCFullYear(now.getUTCFullYear() + VALIDITY_YEARS);
  const name = [{ name: 'commonName', value: fqdn }];
  cert.setSubject(name);
  cert.setIssuer(name);
  cert.setExtensions([
    { name: 'basicConstraints', cA: false, critical: true },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', serverAuth: true },
    { name: 'subjectAltName', altNames: [{ type: 2, value: fqdn }] },
    { name: 'subjectKeyIdentifier' },
  ]);
  cert.sign(keys.privateKey, forge.md.sha256.create());
  const keyInfo = forge.pki.wrapRsaPrivateKey(forge.pki.privateKeyToAsn1(keys.privateKey));
  // forge writes CRLF line ends; files on a Unix host read better with LF.
  return {
    certificatePem: forge.pki.certificateToPem(cert).replaceAll('\r\n', '\n'),
    keyPem: forge.pki.privateKeyInfoToPem(keyInfo).replaceAll('\r\n', '\n'),
  };
}
