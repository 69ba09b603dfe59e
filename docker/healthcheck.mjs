// Container health check without curl: `node healthcheck.mjs URL [MIN-MAX]`.
// Exits 0 when URL answers with a status in MIN-MAX (default 200-399), 1 otherwise.
// HTTPS certificates are not verified: the check talks to the container's own loopback
// address, and the proxy's certificate is self-signed on first start.
import http from 'node:http';
import https from 'node:https';

const [url, range = '200-399'] = process.argv.slice(2);
const [min, max] = range.split('-').map(Number);
if (!url || !Number.isInteger(min) || !Number.isInteger(max)) {
  console.error('usage: node healthcheck.mjs URL [MIN-MAX]');
  process.exit(2);
}

const client = url.startsWith('https:') ? https : http;
const request = client.get(url, { rejectUnauthorized: false, timeout: 2500 }, (response) => {
  response.resume();
  const status = response.statusCode ?? 0;
  if (status < min || status > max) console.error(`${url}: HTTP ${status}, want ${range}`);
  process.exit(status >= min && status <= max ? 0 : 1);
});
request.on('timeout', () => request.destroy(new Error('timed out')));
request.on('error', (error) => {
  console.error(`${url}: ${error.message}`);
  process.exit(1);
});
