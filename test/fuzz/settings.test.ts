import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { parseSettings, renderConfigFiles, SettingsError } from '../../generator/index.js';
import { anyJson, anyText, FUZZ_TIMEOUT_MS, params } from './runs.js';

// Generator settings: what an operator can put in the YAML file (or the environment). Every
// value either fails validation with a SettingsError or renders without tripping the escaping
// gate, and nothing in the rendered files comes from a value that could open a directive.

const nginxy = fc.string({
  unit: fc.constantFrom(...'aZ09.-_/:;{}"\'$\\# \n\r\t@!=+,~[]%?&'.split('')),
  maxLength: 30,
});
const value = fc.oneof(
  anyJson,
  anyText(30),
  nginxy,
  fc.integer({ min: -1, max: 70_000 }),
  fc.boolean(),
);
const settingsArb = fc.record(
  {
    fqdn: value,
    https_port: value,
    http_redirect_port: value,
    config_dir: fc.oneof(
      value,
      nginxy.map((p) => `/${p}`),
    ),
    upstreams: fc.oneof(
      value,
      fc.record({ app: value, sidecar: value, keepalive: value }, { requiredKeys: [] }),
    ),
    api_keys_enabled: value,
    open_id_connect_enabled: value,
    open_id_connect: fc.oneof(
      value,
      fc.record(
        {
          discovery: fc.oneof(
            value,
            nginxy.map((p) => `https://idp.example/${p}`),
          ),
          ssl_verify: value,
          accept_unsupported_alg: value,
          accept_none_alg: value,
          redirect_uri: value,
          client_id_claim: value,
          client_name_claim: value,
          audience: value,
        },
        { requiredKeys: [] },
      ),
    ),
    tls: fc.oneof(
      value,
      fc.record(
        {
          protocols: fc.oneof(
            value,
            fc.array(fc.oneof(value, fc.constantFrom('TLSv1.2', 'TLSv1.3', 'SSLv3'))),
          ),
          ciphers: fc.oneof(value, nginxy),
        },
        { requiredKeys: [] },
      ),
    ),
    auth_cache: fc.oneof(
      value,
      fc.record(
        {
          window_ms: value,
          path: fc.oneof(
            value,
            nginxy.map((p) => `/${p}`),
          ),
        },
        { requiredKeys: [] },
      ),
    ),
    unknown: value,
  },
  { requiredKeys: [] },
);

describe('generator settings', () => {
  test(
    'either a SettingsError listing problems, or files that render within the escaping gate',
    () => {
      fc.assert(
        fc.property(fc.oneof(settingsArb, anyJson), (raw) => {
          let settings: ReturnType<typeof parseSettings>;
          try {
            settings = parseSettings(raw);
          } catch (err) {
            expect(err).toBeInstanceOf(SettingsError);
            expect((err as SettingsError).problems.length).toBeGreaterThan(0);
            return;
          }
          const files = renderConfigFiles(settings);
          for (const file of files) {
            // Quoted values never carry a line break, a variable or an escape of their own.
            for (const line of file.content.split('\n')) expect(line).not.toMatch(/[\r\\]$/);
          }
          const ssl = files.find((f) => f.path.endsWith('ssl.conf'))!.content;
          expect(ssl.match(/^ssl_protocols /gm)).toHaveLength(1);
          expect(ssl.match(/^ssl_ciphers /gm)).toHaveLength(1);
        }),
        params(),
      );
    },
    FUZZ_TIMEOUT_MS,
  );
});
