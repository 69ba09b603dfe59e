import { X509Certificate } from 'node:crypto';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type StartedTestContainer, Wait } from 'testcontainers';
import { afterAll, expect, test } from 'vitest';
import { createSelfSignedCertificate, isGeneratedCertificate } from '../../generator/index.js';
import { freePort } from '../../native/ports.js';
import { containerLogs, IMAGES, TestContainer, testLabels } from '../support/container-engine.js';
import { opensslCertificate } from '../support/openssl.js';
import { handshake } from '../support/tls.js';

/**
 * Issue 21 item 5 in the proxy image: its entrypoint's start step renews the generated
 * certificate of a mounted /etc/config when fewer than 30 days remain, and leaves an operator's
 * certificate alone, however close to its end. The proxy runs alone (upstreams on loopback:
 * nothing is asked; the health check is a TLS handshake).
 */

const DAY = 86_400_000;
const homes: string[] = [];
const started: StartedTestContainer[] = [];

afterAll(async () => {
  for (const container of started) await container.stop({ timeout: 5_000 }).catch(() => {});
  for (const home of homes) await rm(home, { recursive: true, force: true });
});

/** A configuration folder holding only `pair`, as an operator would mount it. */
async function configWith(pair: { certificatePem: string; keyPem: string }): Promise<string> {
  const home = await mkdtemp(join(tmpdir(), 'gw-renew-ct-'));
  homes.push(home);
  const config = join(home, 'config');
  await mkdir(join(config, 'nginx/ssl'), { recursive: true });
  await chmod(home, 0o755);
  await writeFile(join(config, 'nginx/ssl/nginx.key'), pair.keyPem, { mode: 0o600 });
  await writeFile(join(config, 'nginx/ssl/nginx.crt'), pair.certificatePem);
  return config;
}

async function startProxy(config: string): Promise<{ port: number; id: string }> {
  const port = await freePort();
  const container = await new TestContainer(IMAGES.proxy)
    .withLabels(testLabels({ 'gw.test.stack': 'certificate-renewal' }))
    .withEnvironment({
      GATEWAY_FQDN: 'localhost',
      GATEWAY_APP_UPSTREAM: '127.0.0.1:8080',
      GATEWAY_SIDECAR_UPSTREAM: '127.0.0.1:8081',
    })
    .withBindMounts([{ source: config, target: '/etc/config' }])
    .withLoopbackPort(443, port)
    .withWaitStrategy(Wait.forHealthCheck())
    .withStartupTimeout(60_000)
    .start();
  started.push(container);
  return { port, id: container.getId() };
}

test('the proxy renews a generated certificate with 5 days left, logs it, and serves the new one', async () => {
  const generated = createSelfSignedCertificate('localhost', new Date(Date.now() - 392 * DAY));
  const operatorHome = await mkdtemp(join(tmpdir(), 'gw-op-'));
  homes.push(operatorHome);
  const operator = await opensslCertificate(operatorHome, 'op', [
    ...['-newkey', 'rsa:2048', '-days', '10', '-subj', '/CN=localhost'],
    ...['-addext', 'subjectAltName=DNS:localhost'],
  ]);
  const [renewDir, keepDir] = [await configWith(generated), await configWith(operator)];
  const [renewing, keeping] = await Promise.all([startProxy(renewDir), startProxy(keepDir)]);

  const served = await readFile(join(renewDir, 'nginx/ssl/nginx.crt'), 'utf8');
  expect(served).not.toBe(generated.certificatePem);
  expect(isGeneratedCertificate(served)).toBe(true);
  expect(await containerLogs(renewing.id)).toMatch(
    /renewed nginx\/ssl\/nginx\.crt: the generated certificate ends \S+ \(fewer than 30 days left\); the new one is valid until \S+/,
  );
  const hello = await handshake(renewing.port, 'TLSv1.3', served);
  expect(hello.ok && hello.certificate.fingerprint256).toBe(
    new X509Certificate(served).fingerprint256,
  );
  const daysLeft = hello.ok ? (Date.parse(hello.certificate.valid_to) - Date.now()) / DAY : 0;
  expect(daysLeft).toBeGreaterThan(396);

  // The operator's certificate: served as it is, the files untouched, nothing said.
  expect(await readFile(join(keepDir, 'nginx/ssl/nginx.crt'), 'utf8')).toBe(
    operator.certificatePem,
  );
  expect(await readFile(join(keepDir, 'nginx/ssl/nginx.key'), 'utf8')).toBe(operator.keyPem);
  expect(await containerLogs(keeping.id)).not.toContain('renewed');
  const kept = await handshake(keeping.port, 'TLSv1.3', operator.certificatePem);
  expect(kept.ok && kept.certificate.fingerprint256).toBe(
    new X509Certificate(operator.certificatePem).fingerprint256,
  );
}, 120_000);
