import { readFile, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createServer as createTlsServer } from 'node:tls';
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { ensureConfigDir, LAYOUT, parseSettings } from '../../../generator/index.js';
import { type GatewayUnderTest, startGateway } from './support/gateway-harness.js';
import { handshake, http, https } from './support/https-client.js';

// The real nginx with the rendered default.conf and ssl.conf: the plain-HTTP redirect, TLS
// versions, the certificate served, and an operator's hand edits.

describe('with default settings', () => {
  let gw: GatewayUnderTest;
  beforeAll(async () => {
    gw = await startGateway();
  });
  afterAll(async () => {
    await gw?.stop();
  });
  beforeEach(() => gw.reset());

  test('plain HTTP only redirects to HTTPS, asking no one', async () => {
    const answer = await http(gw.httpPort, '/reports?year=2026');
    expect(answer.status).toBe(308);
    expect(answer.headers.location).toBe(`https://localhost:${gw.httpsPort}/reports?year=2026`);
    expect(gw.stubSidecar.requests).toHaveLength(0);
    expect(gw.stubApp.requests).toHaveLength(0);
  });

  test('the client used below can speak TLS 1.0 and 1.1 when a server allows them', async () => {
    const key = await readFile(join(gw.configDir, LAYOUT.key), 'utf8');
    const server = createTlsServer(
      { key, cert: gw.ca, minVersion: 'TLSv1', ciphers: 'DEFAULT@SECLEVEL=0' },
      (socket) => socket.end(),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    try {
      expect(await handshake(port, 'TLSv1', gw.ca)).toMatchObject({ ok: true, protocol: 'TLSv1' });
      expect(await handshake(port, 'TLSv1.1', gw.ca)).toMatchObject({
        ok: true,
        protocol: 'TLSv1.1',
      });
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  // The client offers every suite OpenSSL has at SECLEVEL=0, the CBC-SHA ones TLS 1.0/1.1 can
  // use among them (see the control at the end of this file).
  test('TLS 1.0 and 1.1 are refused, 1.2 and 1.3 accepted', async () => {
    expect(await handshake(gw.httpsPort, 'TLSv1', gw.ca)).toMatchObject({ ok: false });
    expect(await handshake(gw.httpsPort, 'TLSv1.1', gw.ca)).toMatchObject({ ok: false });
    expect(await handshake(gw.httpsPort, 'TLSv1.2', gw.ca)).toMatchObject({
      ok: true,
      protocol: 'TLSv1.2',
    });
    expect(await handshake(gw.httpsPort, 'TLSv1.3', gw.ca)).toMatchObject({
      ok: true,
      protocol: 'TLSv1.3',
    });
  });

  test('serves the generated certificate (CN and SAN = FQDN) and offers HTTP/2', async () => {
    const result = await handshake(gw.httpsPort, 'TLSv1.3', gw.ca);
    if (!result.ok) throw new Error(result.error);
    expect(result.certificate.subject.CN).toBe('localhost');
    expect(result.certificate.subjectaltname).toBe('DNS:localhost');
    expect(result.alpn).toBe('h2');
  });
});

describe('with TLS 1.3 only and default.conf edited by hand (spec 5.3)', () => {
  let gw: GatewayUnderTest;
  beforeAll(async () => {
    gw = await startGateway({
      settings: { tls: { protocols: ['TLSv1.3'] } },
      async beforeStart(configDir) {
        const file = join(configDir, LAYOUT.defaultConf);
        const text = await readFile(file, 'utf8');
        await writeFile(
          file,
          text
            .replace('set $api_keys_enabled true;', 'set $api_keys_enabled false;')
            .replace('set $open_id_connect_enabled false;', 'set $open_id_connect_enabled true;')
            .replace('set $oidc_discovery "";', 'set $oidc_discovery "https://idp.example.test/";'),
        );
        // A restart runs ensure again: the edit must survive it.
        await ensureConfigDir(configDir, parseSettings({ config_dir: configDir }));
      },
    });
  });
  afterAll(async () => {
    await gw?.stop();
  });

  test('the edited toggles are what the sidecar is told', async () => {
    await https(gw.httpsPort, '/reports', gw.ca, {
      headers: { Authorization: 'Bearer stub-token' },
    });
    expect(gw.authCalls()[0]?.headers).toMatchObject({
      'x-gateway-api-keys-enabled': 'false',
      'x-gateway-oidc-enabled': 'true',
      'x-gateway-oidc-discovery': 'https://idp.example.test/',
    });
  });

  test('TLS 1.2 is refused, TLS 1.3 accepted', async () => {
    expect(await handshake(gw.httpsPort, 'TLSv1.2', gw.ca)).toMatchObject({ ok: false });
    expect(await handshake(gw.httpsPort, 'TLSv1.3', gw.ca)).toMatchObject({ ok: true });
  });
});

// The control for the refusal above: the same client, offering the same TLS 1.0-capable suites,
// completes TLS 1.0 and 1.1 handshakes with this nginx as soon as ssl.conf allows them. So the
// refusal with the defaults is ssl.conf speaking, not a client or library that cannot do 1.0/1.1.
describe('with TLS 1.0 and 1.1 explicitly allowed in ssl.conf', () => {
  let gw: GatewayUnderTest;
  beforeAll(async () => {
    gw = await startGateway({
      settings: {
        tls: {
          protocols: ['TLSv1', 'TLSv1.1', 'TLSv1.2'],
          ciphers:
            'ECDHE-RSA-AES128-SHA:ECDHE-RSA-AES256-SHA:ECDHE-RSA-AES128-GCM-SHA256@SECLEVEL=0',
        },
      },
    });
  });
  afterAll(async () => {
    await gw?.stop();
  });

  test('nginx completes TLS 1.0 and 1.1 handshakes with a CBC-SHA suite', async () => {
    expect(await handshake(gw.httpsPort, 'TLSv1', gw.ca)).toMatchObject({
      ok: true,
      protocol: 'TLSv1',
    });
    expect(await handshake(gw.httpsPort, 'TLSv1.1', gw.ca)).toMatchObject({
      ok: true,
      protocol: 'TLSv1.1',
    });
  });
});
