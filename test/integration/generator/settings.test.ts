import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  ALLOWED_KEYS,
  type LoadSettingsOptions,
  loadSettings,
  parseSettings,
  SettingsError,
} from '../../../generator/index.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gw-settings-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The problems a SettingsError lists for `raw`; fails the test if parsing succeeds. */
function problemsOf(raw: unknown): string[] {
  try {
    parseSettings(raw);
  } catch (err) {
    if (err instanceof SettingsError) return err.problems;
    throw err;
  }
  throw new Error(`settings unexpectedly valid: ${JSON.stringify(raw)}`);
}

/** The SettingsError `loadSettings` throws for `options`; fails the test if it succeeds. */
async function loadError(options: LoadSettingsOptions): Promise<SettingsError> {
  try {
    await loadSettings(options);
  } catch (err) {
    if (err instanceof SettingsError) return err;
    throw err;
  }
  throw new Error('settings unexpectedly valid');
}

async function yamlFile(name: string, text: string): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, text);
  return path;
}

describe('defaults', () => {
  test('an empty settings file means every documented default', async () => {
    const settings = await loadSettings({ file: await yamlFile('empty.yaml', '# nothing\n') });
    expect(settings).toEqual({
      fqdn: 'localhost',
      https_port: 443,
      config_dir: '/etc/config',
      upstreams: { app: '127.0.0.1:8080', sidecar: '127.0.0.1:8081', keepalive: 32 },
      api_keys_enabled: true,
      open_id_connect_enabled: false,
      open_id_connect: {
        discovery: '',
        ssl_verify: 'yes',
        accept_unsupported_alg: false,
        accept_none_alg: false,
        redirect_uri: '',
        client_id_claim: 'sub',
        client_name_claim: 'sub',
        audience: '',
      },
      tls: { protocols: ['TLSv1.2', 'TLSv1.3'], ciphers: expect.stringContaining('ECDHE') },
      auth_cache: {
        max_age_ms: 30_000,
        size: '10m',
        control_socket: '/run/gateway-control/nginx.sock',
      },
      key_table: { enabled: true, size: '64m', trust_s: 900 },
      timeouts: { auth_ms: 3_000, upstream_read_s: 60 },
      failure_budget: { per_key_id: 20, per_address: 200, window_s: 60 },
      hsts_max_age_s: 31_536_000,
      console: { enabled: true, oidc_client_id: '', oidc_scope: 'openid' },
      request_id: { trusted_proxies: [] },
      tracing: {
        enabled: false,
        sample_ratio: 1,
        otlp_endpoint: '',
        nginx_spans_to: '127.0.0.1:4319',
      },
    });
  });

  test("the console's settings are allow-listed like every value that reaches nginx", () => {
    const on = parseSettings({
      console: { oidc_client_id: 'gateway-console', oidc_scope: 'openid api' },
    });
    expect(on.console).toEqual({
      enabled: true,
      oidc_client_id: 'gateway-console',
      oidc_scope: 'openid api',
    });
    expect(parseSettings({ console: { enabled: false } }).console.enabled).toBe(false);
    expect(
      problemsOf({ console: { oidc_client_id: 'a"b', oidc_scope: 'openid  api', shown: 1 } }),
    ).toEqual([
      expect.stringMatching(/^console\.oidc_client_id: must not contain a double quote/),
      expect.stringMatching(/^console\.oidc_scope: /),
      expect.stringMatching(/console.*shown/),
    ]);
    expect(problemsOf({ console: { oidc_scope: 'openid;' } })).toEqual([
      expect.stringMatching(/^console\.oidc_scope: must not contain a semicolon/),
    ]);
  });

  test('the decision cache, timeouts and HSTS are bounded settings', () => {
    expect(parseSettings({ auth_cache: { max_age_ms: 0 } }).auth_cache.max_age_ms).toBe(0);
    expect(() => parseSettings({ auth_cache: { max_age_ms: 3_600_001 } })).toThrow(
      /auth_cache\.max_age_ms/,
    );
    expect(() => parseSettings({ auth_cache: { size: '10g' } })).toThrow(/auth_cache\.size/);
    expect(() => parseSettings({ auth_cache: { control_socket: 'relative;x' } })).toThrow(
      /auth_cache\.control_socket/,
    );
    expect(() => parseSettings({ auth_cache: { window_ms: 500 } })).toThrow(/window_ms/);
    expect(parseSettings({ failure_budget: { per_address: 0 } }).failure_budget.per_address).toBe(
      0,
    );
    expect(() => parseSettings({ failure_budget: { per_key_id: -1 } })).toThrow(
      /failure_budget\.per_key_id/,
    );
    expect(() => parseSettings({ failure_budget: { window_s: 0 } })).toThrow(
      /failure_budget\.window_s/,
    );
    expect(() => parseSettings({ timeouts: { auth_ms: 50 } })).toThrow(/timeouts\.auth_ms/);
    expect(() => parseSettings({ timeouts: { upstream_read_s: 0 } })).toThrow(
      /timeouts\.upstream_read_s/,
    );
    expect(parseSettings({ hsts_max_age_s: 0 }).hsts_max_age_s).toBe(0);
    expect(() => parseSettings({ hsts_max_age_s: -1 })).toThrow(/hsts_max_age_s/);
  });

  test('a key without a value means its default', () => {
    const settings = parseSettings({ https_port: null, tls: { protocols: null } });
    expect(settings.https_port).toBe(443);
    expect(settings.tls.protocols).toEqual(['TLSv1.2', 'TLSv1.3']);
  });

  test('the FQDN is compared and rendered in lower case', () => {
    expect(parseSettings({ fqdn: 'Gateway.Example.COM' }).fqdn).toBe('gateway.example.com');
  });
});

describe('every error at once, each with its path', () => {
  test('the invalid fixture lists one problem per mistake', async () => {
    const file = join(import.meta.dirname, '..', '..', 'fixtures', 'invalid', 'every-kind.yaml');
    const error = await loadError({ file });
    const problems = error.problems;
    expect(problems).toEqual(
      expect.arrayContaining([
        'fqdn: must not contain a semicolon (got "gw.example.com;")',
        'htps_port: unknown key (did you mean "https_port"?)',
        'upstreams.app: must not contain a brace (got "127.0.0.1:8080}")',
        expect.stringMatching(/^upstreams\.sidecar: must not contain a line break/),
        expect.stringMatching(/^open_id_connect\.discovery: expected an http\(s\) URL/),
        expect.stringMatching(/^tls\.protocols\[1\]: unknown TLS protocol "TLSv1\.4"/),
      ]),
    );
    expect(problems).toHaveLength(6);
    expect(error.message).toContain(file);
  });

  test.each([
    ['a semicolon', { fqdn: 'a.example;' }, 'fqdn: must not contain a semicolon'],
    ['a closing brace', { tls: { ciphers: 'HIGH}' } }, 'tls.ciphers: must not contain a brace'],
    ['an opening brace', { open_id_connect: { audience: '{x' } }, 'open_id_connect.audience'],
    ['a line break', { fqdn: 'a.example\nb' }, 'fqdn: must not contain a line break'],
    ['a double quote', { open_id_connect: { client_id_claim: 's"ub' } }, 'a double quote'],
    [
      'a single quote',
      { open_id_connect: { redirect_uri: "https://a.example/'x" } },
      'a single quote',
    ],
    ['a dollar sign', { open_id_connect: { audience: '$host' } }, 'a dollar sign'],
    ['a space', { upstreams: { app: 'app 8080' } }, 'upstreams.app: must not contain a space'],
    ['a backslash', { config_dir: '/etc\\config' }, 'config_dir: must not contain a backslash'],
  ])('a value with %s is refused', (_, raw, message) => {
    expect(problemsOf(raw).join('\n')).toContain(message);
  });

  test.each([
    [{ fqdn: '192.168.1.10' }, 'fqdn: must be a DNS name, not an IP address'],
    [{ fqdn: '-bad-.example' }, 'fqdn: expected a DNS name'],
    [{ https_port: 0 }, 'https_port: must be a port number from 1 to 65535 (got 0)'],
    [{ https_port: '443' }, 'https_port: must be a port number from 1 to 65535 (got "443")'],
    [{ upstreams: { app: 'app:70000' } }, 'upstreams.app: port must be between 1 and 65535'],
    [{ upstreams: { sidecar: 'sidecar' } }, 'upstreams.sidecar: expected host:port'],
    [{ open_id_connect: { discovery: 'ftp://idp.example/x' } }, 'open_id_connect.discovery'],
    [{ open_id_connect: { ssl_verify: true } }, 'open_id_connect.ssl_verify'],
    [{ tls: { protocols: ['SSLv3'] } }, 'tls.protocols[0]: unknown TLS protocol "SSLv3"'],
    [{ tls: { protocols: [] } }, 'tls.protocols: at least one TLS protocol is needed'],
    [{ tls: { protocols: ['TLSv1.3', 'TLSv1.3'] } }, 'tls.protocols: lists a protocol twice'],
    [{ config_dir: 'relative/dir' }, 'config_dir: expected an absolute path'],
    [{ config_dir: '/etc/../config' }, 'config_dir: must be a normalised path'],
    [{ open_id_connect: 'on' }, 'open_id_connect: Invalid input'],
    [{ colour: 'blue' }, 'colour: unknown key (allowed: fqdn, https_port'],
    [{ tls: { protcols: ['TLSv1.3'] } }, 'tls.protcols: unknown key (did you mean "protocols"?)'],
  ])('%j is refused', (raw, message) => {
    expect(problemsOf(raw).join('\n')).toContain(message);
  });

  test('rules across fields are checked too', () => {
    expect(
      problemsOf({
        api_keys_enabled: false,
        open_id_connect_enabled: true,
        https_port: 8443,
        http_redirect_port: 8443,
      }),
    ).toEqual([
      'open_id_connect.discovery: is required when open_id_connect_enabled is true',
      'http_redirect_port: must differ from https_port',
    ]);
    expect(problemsOf({ api_keys_enabled: false })).toEqual([
      expect.stringMatching(/^api_keys_enabled: .*every request would be refused/),
    ]);
  });

  test('a YAML syntax error names the file and the line', async () => {
    const file = await yamlFile('broken.yaml', 'fqdn: a.example\ntls:\n  protocols: [TLSv1.2\n');
    await expect(loadSettings({ file })).rejects.toThrow(/broken\.yaml.*\n.*not valid YAML.*line/s);
  });

  test('a settings file that is not a mapping is refused', async () => {
    const file = await yamlFile('list.yaml', '- fqdn\n');
    await expect(loadSettings({ file })).rejects.toThrow(/mapping/);
  });

  test('a missing settings file is a settings error naming it', async () => {
    await expect(loadSettings({ file: join(dir, 'nope.yaml') })).rejects.toThrow(/nope\.yaml/);
  });
});

describe('sources', () => {
  test('GATEWAY_* variables override the file; empty ones are ignored', async () => {
    const file = await yamlFile('base.yaml', 'fqdn: file.example\nhttps_port: 8443\n');
    const settings = await loadSettings({
      file,
      env: {
        GATEWAY_FQDN: 'env.example',
        GATEWAY_HTTPS_PORT: '',
        GATEWAY_APP_UPSTREAM: 'app:8080',
        GATEWAY_SIDECAR_UPSTREAM: 'gateway:8081',
      },
    });
    expect(settings.fqdn).toBe('env.example');
    expect(settings.https_port).toBe(8443);
    expect(settings.upstreams).toMatchObject({ app: 'app:8080', sidecar: 'gateway:8081' });
  });

  test('GATEWAY_SETTINGS names the file when none is given', async () => {
    const file = await yamlFile('named.yaml', 'fqdn: named.example\n');
    expect((await loadSettings({ env: { GATEWAY_SETTINGS: file } })).fqdn).toBe('named.example');
  });

  test('a bad environment value says which variable it came from', async () => {
    const error = await loadError({ env: { GATEWAY_HTTPS_PORT: '80a', GATEWAY_FQDN: 'x;y' } });
    expect(error.problems).toEqual([
      'fqdn (from GATEWAY_FQDN): must not contain a semicolon (got "x;y")',
      'https_port (from GATEWAY_HTTPS_PORT): must be a port number from 1 to 65535 (got "80a")',
    ]);
  });

  test('defaults sit under the file and overrides over everything', async () => {
    const file = await yamlFile('layers.yaml', 'config_dir: /from/file\nhttps_port: 9443\n');
    const settings = await loadSettings({
      file,
      defaults: { config_dir: '/from/defaults', fqdn: 'defaults.example' },
      overrides: { https_port: 10443 },
      env: { GATEWAY_HTTPS_PORT: '11443' },
    });
    expect(settings).toMatchObject({
      config_dir: '/from/file',
      fqdn: 'defaults.example',
      https_port: 10443,
    });
  });
});

describe('gateway.example.yaml', () => {
  const example = join(import.meta.dirname, '..', '..', '..', 'gateway.example.yaml');

  test('is valid and states exactly the built-in defaults', async () => {
    expect(await loadSettings({ file: example })).toEqual(parseSettings({}));
  });

  test('documents every settings key', async () => {
    const text = await readFile(example, 'utf8');
    for (const [section, keys] of Object.entries(ALLOWED_KEYS)) {
      for (const key of keys) {
        const indent = section === '' ? '' : '  ';
        expect(text, `${section}.${key}`).toMatch(new RegExp(`^${indent}${key}:`, 'm'));
      }
    }
  });
});
