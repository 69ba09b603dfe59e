import { describe, expect, test } from 'vitest';
import { readToggles, ToggleConfigError } from '../../../sidecar/auth/method-toggles.js';

describe('readToggles', () => {
  test('absent headers mean the spec defaults: API keys on, OIDC off, ssl_verify yes', () => {
    expect(readToggles({})).toEqual({
      apiKeys: true,
      oidc: false,
      oidcOptions: {
        discovery: '',
        sslVerify: true,
        acceptUnsupportedAlg: false,
        acceptNoneAlg: false,
        redirectUri: '',
        clientIdClaim: 'sub',
        clientNameClaim: 'sub',
        audience: '',
      },
    });
  });

  test('reads every forwarded value', () => {
    expect(
      readToggles({
        'x-gateway-api-keys-enabled': 'false',
        'x-gateway-oidc-enabled': 'true',
        'x-gateway-oidc-discovery': 'https://idp/.well-known/openid-configuration',
        'x-gateway-oidc-ssl-verify': 'no',
        'x-gateway-oidc-accept-unsupported-alg': 'true',
        'x-gateway-oidc-accept-none-alg': 'true',
        'x-gateway-oidc-redirect-uri': 'https://app/cb',
        'x-gateway-oidc-client-id-claim': 'azp',
        'x-gateway-oidc-client-name-claim': 'name',
        'x-gateway-oidc-audience': 'gateway',
      }),
    ).toEqual({
      apiKeys: false,
      oidc: true,
      oidcOptions: {
        discovery: 'https://idp/.well-known/openid-configuration',
        sslVerify: false,
        acceptUnsupportedAlg: true,
        acceptNoneAlg: true,
        redirectUri: 'https://app/cb',
        clientIdClaim: 'azp',
        clientNameClaim: 'name',
        audience: 'gateway',
      },
    });
  });

  test('an empty text value means its default', () => {
    const t = readToggles({
      'x-gateway-oidc-client-id-claim': '',
      'x-gateway-oidc-client-name-claim': '',
      'x-gateway-oidc-ssl-verify': '',
    });
    expect(t.oidcOptions.clientIdClaim).toBe('sub');
    expect(t.oidcOptions.clientNameClaim).toBe('sub');
    expect(t.oidcOptions.sslVerify).toBe(true);
  });

  test.each([
    ['x-gateway-api-keys-enabled', 'yes'],
    ['x-gateway-api-keys-enabled', 'TRUE'],
    ['x-gateway-api-keys-enabled', ''],
    ['x-gateway-oidc-enabled', '1'],
    ['x-gateway-oidc-accept-none-alg', 'on'],
    ['x-gateway-oidc-accept-unsupported-alg', 'False'],
  ])('%s: %j is a configuration fault, not a silent switch', (name, value) => {
    expect(() => readToggles({ [name]: value })).toThrow(
      new ToggleConfigError(`${name} must be "true" or "false", got ${JSON.stringify(value)}`),
    );
  });

  test('ssl_verify other than yes or no is a configuration fault', () => {
    expect(() => readToggles({ 'x-gateway-oidc-ssl-verify': 'off' })).toThrow(
      new ToggleConfigError('x-gateway-oidc-ssl-verify must be "yes" or "no", got "off"'),
    );
    expect(() => readToggles({ 'x-gateway-oidc-ssl-verify': 'off' })).toThrow(ToggleConfigError);
  });
});
