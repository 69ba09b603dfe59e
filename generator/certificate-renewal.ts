import { X509Certificate } from 'node:crypto';
import { GENERATED_CERTIFICATE_COMMENT } from './certificate.js';

/** A generated certificate with fewer days left than this is replaced at start. */
export const RENEW_WITHIN_DAYS = 30;

/** What a start did about a generated certificate near its end (logged by the callers). */
export interface CertificateRenewal {
  /** Relative to the configuration directory. */
  file: string;
  previousNotAfter: string;
  notAfter: string;
}

// DER of the nsComment extension's OID, 2.16.840.1.113730.1.13.
const NS_COMMENT_OID = Buffer.from('06096086480186f842010d', 'hex');

/**
 * Whether `pem` is a certificate this generator made: self-signed, carrying the generator's
 * comment. An operator's certificate (their CA's, or their own self-signed one) never is.
 * Certificates made before the comment existed (valid ten years) are not recognised either,
 * so they are left alone too.
 */
export function isGeneratedCertificate(pem: string): boolean {
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(pem);
  } catch {
    return false;
  }
  return (
    cert.issuer === cert.subject &&
    cert.raw.includes(NS_COMMENT_OID) &&
    cert.raw.includes(Buffer.from(GENERATED_CERTIFICATE_COMMENT)) &&
    cert.verify(cert.publicKey)
  );
}

/**
 * The end of a generated certificate that is due for renewal at `now` (fewer than
 * RENEW_WITHIN_DAYS left, or already past), or null: not generated, or not due.
 */
export function generatedCertificateDue(pem: string, now: Date): Date | null {
  if (!isGeneratedCertificate(pem)) return null;
  const notAfter = new Date(new X509Certificate(pem).validTo);
  const left = notAfter.getTime() - now.getTime();
  return left < RENEW_WITHIN_DAYS * 86_400_000 ? notAfter : null;
}
