import { generateKeyPairSync, randomBytes } from 'node:crypto';
import forge from 'node-forge';

export interface TestPki {
  /** The test CA's certificate (PEM): trusted only where a test hands it over. */
  caPem: string;
  /** A server certificate issued by the CA (for 127.0.0.1 and localhost unless told), and its key. */
  serverCertPem: string;
  serverKeyPem: string;
}

/** RSA keys from node:crypto (fast); node-forge only assembles and signs the certificates. */
function rsaKeys(): { privateKey: forge.pki.rsa.PrivateKey; publicKey: forge.pki.rsa.PublicKey } {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const pem = privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
  const forgeKey = forge.pki.privateKeyFromPem(pem) as forge.pki.rsa.PrivateKey;
  return { privateKey: forgeKey, publicKey: forge.pki.setRsaPublicKey(forgeKey.n, forgeKey.e) };
}

function baseCertificate(publicKey: forge.pki.PublicKey): forge.pki.Certificate {
  const cert = forge.pki.createCertificate();
  cert.publicKey = publicKey;
  // Positive serial: a leading 0 bit keeps DER from reading it as negative.
  cert.serialNumber = `01${randomBytes(15).toString('hex')}`;
  cert.validity.notBefore = new Date(Date.now() - 60_000);
  cert.validity.notAfter = new Date(Date.now() + 24 * 3_600_000);
  return cert;
}

/**
 * A throw-away CA and a server certificate it issued, for a local HTTPS provider: by default
 * for loopback; `dnsName` names a provider reached by another name (a container's alias).
 */
export function createTestPki(dnsName?: string): TestPki {
  const ca = rsaKeys();
  const caCert = baseCertificate(ca.publicKey);
  const caName = [
    { name: 'commonName', value: `gateway test CA ${randomBytes(4).toString('hex')}` },
  ];
  caCert.setSubject(caName);
  caCert.setIssuer(caName);
  caCert.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  caCert.sign(ca.privateKey, forge.md.sha256.create());

  const server = rsaKeys();
  const cert = baseCertificate(server.publicKey);
  cert.setSubject([{ name: 'commonName', value: dnsName ?? '127.0.0.1' }]);
  cert.setIssuer(caName);
  cert.setExtensions([
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', serverAuth: true },
    {
      name: 'subjectAltName',
      altNames: dnsName
        ? [{ type: 2, value: dnsName }]
        : [
            { type: 7, ip: '127.0.0.1' },
            { type: 2, value: 'localhost' },
          ],
    },
    {
      name: 'authorityKeyIdentifier',
      keyIdentifier: caCert.generateSubjectKeyIdentifier().getBytes(),
    },
  ]);
  cert.sign(ca.privateKey, forge.md.sha256.create());

  return {
    caPem: forge.pki.certificateToPem(caCert),
    serverCertPem: forge.pki.certificateToPem(cert),
    serverKeyPem: forge.pki.privateKeyToPem(server.privateKey),
  };
}
