import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect, type PeerCertificate, type SecureVersion } from 'node:tls';

export interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface Call {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
}

function collect(res: import('node:http').IncomingMessage): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on('data', (chunk: Buffer) => chunks.push(chunk));
    res.on('error', reject);
    res.on('end', () =>
      resolve({
        status: res.statusCode ?? 0,
        headers: res.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      }),
    );
  });
}

/** One HTTPS request to the gateway on 127.0.0.1, verifying its certificate against `ca`. */
export function https(port: number, path: string, ca: string, call: Call = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      {
        host: '127.0.0.1',
        port,
        path,
        method: call.method ?? 'GET',
        headers: call.headers,
        servername: 'localhost',
        ca,
        agent: false,
      },
      (res) => collect(res).then(resolve, reject),
    );
    req.on('error', reject);
    req.end(call.body);
  });
}

/** One plain-HTTP request on 127.0.0.1. */
export function http(port: number, path: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, agent: false }, (res) =>
      collect(res).then(resolve, reject),
    );
    req.on('error', reject);
    req.end();
  });
}

export type Handshake =
  | { ok: true; protocol: string; alpn: string | false; certificate: PeerCertificate }
  | { ok: false; error: string };

/**
 * A TLS handshake pinned to exactly one protocol version. SECLEVEL=0 lets this client offer
 * TLS 1.0/1.1 at all, so a refusal comes from the server.
 */
export function handshake(port: number, version: SecureVersion, ca: string): Promise<Handshake> {
  return new Promise((resolve) => {
    const socket = connect({
      host: '127.0.0.1',
      port,
      servername: 'localhost',
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
