import { randomBytes } from 'node:crypto';
import forge from 'node-forge';

/** A certificate and its private key, PEM encoded. */
export interface CertificatePair {
  certificatePem: string;
  keyPem: string;
}

/**
 * 397 days: browsers and TLS scanners flag a server certificate valid for more than 398 days
 * (CA/Browser Forum), so the generated one stays under that and is renewed at start instead
 * (certificate-renewal.ts; docs/decisions/20261125-certificate-lifetime.md).
 */
export const CERTIFICATE_VALIDITY_DAYS = 397;

/**
 * The comment (Netscape nsComment extension) that marks a certificate as made here: only such
 * a certificate is ever renewed, never one an operator supplied.
 */
export const GENERATED_CERTIFICATE_COMMENT = 'self-signed by gateway-config, renewed at start';

/**
 * A unique self-signed server certificate for `fqdn`: RSA 2048 (node-forge issues RSA only;
 * it uses Node's native key generation, so this takes milliseconds), CN and a DNS SAN equal
 * to the FQDN, a random 128-bit serial, SHA-256 signature, valid 397 days, marked as generated.
 */
export function createSelfSignedCertificate(fqdn: string, now: Date = new Date()): CertificatePair {
  const keys = forge.pki.rsa.generateKeyPair({ bits: 2048, e: 0x10001 });
  const cert = forge.pki.createCertificate();
  cert.publicKey = keys.publicKey;
  // A leading 0x01..0x7f byte keeps the DER integer positive.
  cert.serialNumber = `${(1 + (randomBytes(1)[0]! % 0x7f)).toString(16).padStart(2, '0')}${randomBytes(15).toString('hex')}`;
  // A little in the past, so a client whose clock is slightly behind accepts it.
  cert.validity.notBefore = new Date(now.getTime() - 60 * 60 * 1000);
  cert.validity.notAfter = new Date(now.getTime() + CERTIFICATE_VALIDITY_DAYS * 86_400_000);
  const name = [{ name: 'commonName', value: fqdn }];
  cert.setSubject(name);
  cert.setIssuer(name);
  cert.setExtensions([
    { name: 'basicConstraints', cA: false, critical: true },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', serverAuth: true },
    { name: 'subjectAltName', altNames: [{ type: 2, value: fqdn }] },
    { name: 'subjectKeyIdentifier' },
    { name: 'nsComment', comment: GENERATED_CERTIFICATE_COMMENT },
  ]);
  cert.sign(keys.privateKey, forge.md.sha256.create());
  const keyInfo = forge.pki.wrapRsaPrivateKey(forge.pki.privateKeyToAsn1(keys.privateKey));
  // forge writes CRLF line ends; files on a Unix host read better with LF.
  return {
    certificatePem: forge.pki.certificateToPem(cert).replaceAll('\r\n', '\n'),
    keyPem: forge.pki.privateKeyInfoToPem(keyInfo).replaceAll('\r\n', '\n'),
  };
}
