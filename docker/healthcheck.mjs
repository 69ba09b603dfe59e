// Container health check without curl:
//   node healthcheck.mjs http(s)://HOST:PORT/PATH [MIN-MAX]
//     exits 0 when the URL answers with a status in MIN-MAX (default 200-399), 1 otherwise;
//   node healthcheck.mjs tls://HOST:PORT
//     exits 0 when a TLS handshake with HOST:PORT completes, 1 otherwise. No HTTP request is
//     sent: the proxy's check must not reach the sidecar or the application (every location
//     of the gateway is behind auth_request), and must not fill nginx's access log.
// Certificates are not verified: the check talks to the container's own loopback address,
// and the proxy's certificate is issued for the FQDN (self-signed on first start).
import http from 'node:http';
import https from 'node:https';
import tls from 'node:tls';

const [url, range = '200-399'] = process.argv.slice(2);
const TIMEOUT_MS = 2500;

function fail(message) {
  console.error(message);
  process.exit(1);
}

if (url?.startsWith('tls://')) {
  const { hostname, port } = new URL(url);
  const socket = tls.connect({
    host: hostname,
    port: Number(port) || 443,
    rejectUnauthorized: false,
    timeout: TIMEOUT_MS,
  });
  socket.once('secureConnect', () => {
    const certificate = socket.getPeerCertificate();
    socket.end();
    if (!certificate?.raw) fail(`${url}: handshake without a certificate`);
    process.exit(0);
  });
  socket.once('timeout', () => socket.destroy(new Error(`no handshake within ${TIMEOUT_MS} ms`)));
  socket.once('error', (error) => fail(`${url}: ${error.message}`));
} else {
  const [min, max] = range.split('-').map(Number);
  if (!url || !Number.isInteger(min) || !Number.isInteger(max)) {
    console.error(
      'usage: node healthcheck.mjs URL [MIN-MAX] | node healthcheck.mjs tls://HOST:PORT',
    );
    process.exit(2);
  }
  const client = url.startsWith('https:') ? https : http;
  const request = client.get(
    url,
    { rejectUnauthorized: false, timeout: TIMEOUT_MS },
    (response) => {
      response.resume();
      const status = response.statusCode ?? 0;
      if (status < min || status > max) fail(`${url}: HTTP ${status}, want ${range}`);
      process.exit(0);
    },
  );
  request.on('timeout', () => request.destroy(new Error('timed out')));
  request.on('error', (error) => fail(`${url}: ${error.message}`));
}
