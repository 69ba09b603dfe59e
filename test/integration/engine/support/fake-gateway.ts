import { generateKeyPairSync } from 'node:crypto';
import { once } from 'node:events';
import { request } from 'node:http';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import forge from 'node-forge';

/** A self-signed certificate for localhost and 127.0.0.1, PEM. */
export function selfSigned(): { cert: string; key: string } {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(
    publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  );
  cert.serialNumber = '01';
  cert.validity.notBefore = new Date(Date.now() - 60_000);
  cert.validity.notAfter = new Date(Date.now() + 24 * 3600_000);
  const name = [{ name: 'commonName', value: 'localhost' }];
  cert.setSubject(name);
  cert.setIssuer(name);
  cert.setExtensions([
    { name: 'basicConstraints', cA: true },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, keyCertSign: true },
    { name: 'extKeyUsage', serverAuth: true },
    {
      name: 'subjectAltName',
      altNames: [
        { type: 2, value: 'localhost' },
        { type: 7, ip: '127.0.0.1' },
      ],
    },
  ]);
  const key = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  cert.sign(forge.pki.privateKeyFromPem(key), forge.md.sha256.create());
  return { cert: forge.pki.certificateToPem(cert), key };
}

export interface SeenRequest {
  method: string;
  path: string;
  authorization: string | undefined;
  cookie: string | undefined;
}

/**
 * A stand-in for nginx and the sidecar, for client tests: HTTPS with a self-signed certificate,
 * one accepted Authorization value, identity headers and X-Forwarded-Proto towards the engine.
 * It serves the engine at `/` and under `/prefix/`.
 */
export async function fakeGateway(engineUrl: string, authorization: string) {
  const tls = selfSigned();
  const seen: SeenRequest[] = [];
  const server = createServer(tls, (req, res) => {
    const path = (req.url ?? '/').replace(/^\/prefix(?=\/)/, '');
    seen.push({
      method: req.method ?? '',
      path,
      authorization: req.headers.authorization,
      cookie: req.headers.cookie,
    });
    if (req.headers.authorization !== authorization) {
      res.writeHead(401, { 'Content-Type': 'application/json' }).end('{"error":"invalid_api_key"}');
      return;
    }
    const headers = { ...req.headers };
    delete headers.authorization;
    headers['x-client-id'] = '7';
    headers['x-client-name'] = encodeURIComponent('Zürich client');
    headers['x-client-is-admin'] = 'false';
    headers['x-forwarded-proto'] = 'https';
    const upstream = request(`${engineUrl}${path}`, { method: req.method, headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.writeHead(502).end('bad gateway'));
    req.pipe(upstream);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://localhost:${port}`,
    ca: tls.cert,
    seen,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}
