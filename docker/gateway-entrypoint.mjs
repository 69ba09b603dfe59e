// Entrypoint of the gateway image: completes two variables, then runs the sidecar
// (dist/sidecar/main.js) in this same process, which gets the container's signals.
//
//   DATABASE_PASSWORD_FILE  a file holding the database password (docker-compose.yml's volume
//                           `secrets`, written on the first `up`): put into DATABASE_URL, which
//                           must then hold none (postgres://gateway@database:5432/gateway).
//                           Any character works; it is percent-encoded.
//   METRICS_LISTEN_FACING   a host name: METRICS_LISTEN's port is served on this container's
//                           address on the network where that host is, and on no other. In
//                           docker-compose.replicas.yml a pair's namespace is on the
//                           application's network too; its metrics and /readyz are for the
//                           balancer's network only (docs/security.md).
// Unset, both leave the environment as it is (the Kubernetes pod gives DATABASE_URL whole).

import { lookup } from 'node:dns/promises';
import { readFileSync } from 'node:fs';
import { networkInterfaces } from 'node:os';

const env = process.env;

function fail(message) {
  console.error(`gateway-entrypoint: ${message}`);
  process.exit(1);
}

if (env.DATABASE_PASSWORD_FILE) {
  let password = '';
  try {
    password = readFileSync(env.DATABASE_PASSWORD_FILE, 'utf8').replace(/[\r\n]+$/, '');
  } catch (err) {
    fail(`cannot read DATABASE_PASSWORD_FILE (${err.message})`);
  }
  if (!password) fail(`DATABASE_PASSWORD_FILE ${env.DATABASE_PASSWORD_FILE} is empty`);
  let url;
  try {
    url = new URL(env.DATABASE_URL ?? '');
  } catch {
    fail('DATABASE_PASSWORD_FILE is set but DATABASE_URL is not a URL (postgres://user@host/db)');
  }
  if (url.password)
    fail('DATABASE_URL holds a password and DATABASE_PASSWORD_FILE is set: keep one');
  url.password = encodeURIComponent(password);
  env.DATABASE_URL = url.toString();
  delete env.DATABASE_PASSWORD_FILE;
}

/** a.b.c.d -> 32-bit number */
function ipv4(text) {
  return text.split('.').reduce((n, part) => (n << 8) + Number(part), 0) >>> 0;
}

if (env.METRICS_LISTEN_FACING) {
  const host = env.METRICS_LISTEN_FACING;
  const port = /:(\d{1,5})$/.exec(env.METRICS_LISTEN ?? '')?.[1] ?? '9464';
  let peer = '';
  // The host (depends_on, healthy) may take a moment to be resolvable: 30 s at most.
  for (let i = 0; i < 60 && !peer; i++) {
    peer = await lookup(host, { family: 4 }).then(
      (a) => a.address,
      () => '',
    );
    if (!peer) await new Promise((r) => setTimeout(r, 500));
  }
  if (!peer) fail(`METRICS_LISTEN_FACING: ${host} does not resolve`);
  const mine = Object.values(networkInterfaces())
    .flat()
    .find((a) => {
      if (a?.family !== 'IPv4' || a.internal || !a.cidr) return false;
      const bits = Number(a.cidr.split('/')[1]);
      const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
      return (ipv4(a.address) & mask) === (ipv4(peer) & mask);
    });
  if (!mine) fail(`METRICS_LISTEN_FACING: no address of this container is on ${host}'s network`);
  env.METRICS_LISTEN = `${mine.address}:${port}`;
  delete env.METRICS_LISTEN_FACING;
  console.error(`gateway-entrypoint: metrics on ${env.METRICS_LISTEN} (the network of ${host})`);
}

await import('/app/dist/sidecar/main.js');
