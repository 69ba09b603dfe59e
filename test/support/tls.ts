import { connect, type PeerCertificate, type SecureVersion } from 'node:tls';

export type Handshake =
  | { ok: true; protocol: string; alpn: string | false; certificate: PeerCertificate }
  | { ok: false; error: string };

/**
 * A TLS handshake pinned to exactly one protocol version. SECLEVEL=0 lets this client offer
 * TLS 1.0/1.1 at all, so a refusal comes from the server.
 */
export function handshake(
  port: number,
  version: SecureVersion,
  ca: string,
  servername = 'localhost',
): Promise<Handshake> {
  return new Promise((resolve) => {
    const socket = connect({
      host: '127.0.0.1',
      port,
      servername,
      ca,
      minVersion: version,
      maxVersion: version,
      ciphers: 'DEFAULT@SECLEVEL=0',
      ALPNProtocols: ['h2', 'http/1.1'],
    });
    socket.once('secureConnect', () => {
      resolve({
        ok: true,
        protocol: socket.getProtocol() ?? '',
        alpn: socket.alpnProtocol ?? false,
        certificate: socket.getPeerCertificate(),
      });
      socket.end();
    });
    socket.once('error', (err) => resolve({ ok: false, error: err.message }));
  });
}
