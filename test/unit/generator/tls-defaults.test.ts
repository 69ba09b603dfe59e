import { describe, expect, test } from 'vitest';
import {
  LAYOUT,
  parseSettings,
  renderConfigFiles,
  SettingsError,
} from '../../../generator/index.js';
import { sslConfModel } from '../../../generator/template-model.js';

// The TLS an operator gets without touching anything, asserted directly (not only through the
// golden files, which UPDATE_GOLDEN=1 rewrites without complaint).

const MOZILLA_INTERMEDIATE_TLS12 = [
  'ECDHE-ECDSA-AES128-GCM-SHA256',
  'ECDHE-RSA-AES128-GCM-SHA256',
  'ECDHE-ECDSA-AES256-GCM-SHA384',
  'ECDHE-RSA-AES256-GCM-SHA384',
  'ECDHE-ECDSA-CHACHA20-POLY1305',
  'ECDHE-RSA-CHACHA20-POLY1305',
];

function defaultSslConf(): string {
  const file = renderConfigFiles(parseSettings({})).find((f) => f.path === LAYOUT.sslConf);
  if (!file) throw new Error('no ssl.conf rendered');
  return file.content;
}

/** The arguments of every line of `ssl.conf` that starts with `directive`. */
function directive(text: string, name: string): string[] {
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${name} `))
    .map((line) => line.slice(name.length + 1));
}

describe('the default ssl.conf', () => {
  test('offers TLS 1.2 and 1.3 only', () => {
    expect(directive(defaultSslConf(), 'ssl_protocols')).toEqual(['TLSv1.2 TLSv1.3;']);
  });

  test('offers exactly the forward-secret AEAD suites for TLS 1.2', () => {
    expect(directive(defaultSslConf(), 'ssl_ciphers')).toEqual([
      `"${MOZILLA_INTERMEDIATE_TLS12.join(':')}";`,
    ]);
  });

  test('never names TLS 1.0/1.1, SSL, or a suite without forward secrecy or AEAD', () => {
    const text = defaultSslConf();
    expect(text).not.toMatch(/TLSv1(\.1)?[ ;]|SSLv/);
    expect(text).not.toMatch(/-CBC|-SHA[;:"]|RC4|3DES|NULL|EXPORT|aNULL|MD5/);
  });

  test('uses the certificate and key of the configuration directory, no session tickets', () => {
    const text = defaultSslConf();
    expect(directive(text, 'ssl_certificate')).toEqual(['"/etc/config/nginx/ssl/nginx.crt";']);
    expect(directive(text, 'ssl_certificate_key')).toEqual(['"/etc/config/nginx/ssl/nginx.key";']);
    expect(directive(text, 'ssl_session_tickets')).toEqual(['off;']);
    expect(directive(text, 'ssl_prefer_server_ciphers')).toEqual(['off;']);
  });
});

describe('TLS settings', () => {
  test('the model renders what the operator chose, in order', () => {
    const settings = parseSettings({
      config_dir: '/srv/gw',
      tls: { protocols: ['TLSv1.3', 'TLSv1.2'], ciphers: 'HIGH:!aNULL@SECLEVEL=2' },
    });
    expect(sslConfModel(settings)).toEqual({
      certificate: '"/srv/gw/nginx/ssl/nginx.crt"',
      key: '"/srv/gw/nginx/ssl/nginx.key"',
      protocols: 'TLSv1.3 TLSv1.2',
      ciphers: '"HIGH:!aNULL@SECLEVEL=2"',
    });
  });

  test('TLS 1.0 and 1.1 are possible only when asked for by name', () => {
    expect(parseSettings({ tls: { protocols: ['TLSv1', 'TLSv1.1'] } }).tls.protocols).toEqual([
      'TLSv1',
      'TLSv1.1',
    ]);
  });

  test.each([
    [
      { protocols: ['SSLv3'] },
      'unknown TLS protocol "SSLv3" (known: TLSv1, TLSv1.1, TLSv1.2, TLSv1.3)',
    ],
    [{ ciphers: 'HIGH^x' }, 'expected an OpenSSL cipher list such as HIGH:!aNULL, got "HIGH^x"'],
    [{ protocols: ['TLSv1.4'] }, 'unknown TLS protocol "TLSv1.4"'],
    [{ protocols: [] }, 'at least one TLS protocol is needed'],
    [{ protocols: ['TLSv1.2', 'TLSv1.2'] }, 'lists a protocol twice'],
    [{ ciphers: 'HIGH; include /etc/passwd' }, 'must not contain a semicolon'],
    [{ ciphers: '' }, 'must not be empty'],
    [{ ciphers: 'HIGH:$x' }, 'must not contain a dollar sign'],
  ])('%j is refused: %s', (tls, message) => {
    expect(() => parseSettings({ tls })).toThrow(SettingsError);
    expect(() => parseSettings({ tls })).toThrow(message);
  });
});
