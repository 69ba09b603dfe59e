import { describe, expect, test } from 'vitest';
import { discover } from '../../../sidecar/oidc/discovery.js';
import { ProviderError } from '../../../sidecar/oidc/errors.js';
import type { ProviderHttp } from '../../../sidecar/oidc/provider-http.js';

/** A provider HTTP client that answers `doc` and records what it was asked. */
function answering(doc: unknown) {
  const asked: unknown[][] = [];
  const http = {
    getJson: async (...args: unknown[]) => {
      asked.push(args);
      return doc;
    },
  } as unknown as ProviderHttp;
  return { http, asked };
}

const HTTPS = new URL('https://idp.example/.well-known/openid-configuration');
const HTTP = new URL('http://idp.example/.well-known/openid-configuration');

describe('discover', () => {
  test('reads issuer, jwks_uri and the signing algorithms', async () => {
    const { http, asked } = answering({
      issuer: 'https://idp.example',
      jwks_uri: 'https://idp.example/jwks',
      id_token_signing_alg_values_supported: ['ES256'],
    });
    expect(await discover(http, HTTPS, false)).toEqual({
      issuer: 'https://idp.example',
      jwksUri: new URL('https://idp.example/jwks'),
      signingAlgs: ['ES256'],
    });
    expect(asked).toEqual([[HTTPS, false, 'OpenID Connect discovery', 'discovery']]);
  });

  test('no signing algorithms listed means RS256 (Discovery 1.0)', async () => {
    const { http } = answering({ issuer: 'i', jwks_uri: 'https://idp.example/jwks' });
    expect((await discover(http, HTTPS, true)).signingAlgs).toEqual(['RS256']);
  });

  test('a provider found over plain HTTP may name an http key set', async () => {
    const { http } = answering({ issuer: 'i', jwks_uri: 'http://idp.example/jwks' });
    expect((await discover(http, HTTP, true)).jwksUri.href).toBe('http://idp.example/jwks');
  });

  test.each([
    ['a list', [], 'document is not a JSON object'],
    ['null', null, 'document is not a JSON object'],
    ['a string', 'x', 'document is not a JSON object'],
    ['no issuer', { jwks_uri: 'https://idp.example/jwks' }, 'no "issuer"'],
    ['an empty issuer', { issuer: '', jwks_uri: 'https://idp.example/jwks' }, 'no "issuer"'],
    ['a numeric issuer', { issuer: 5, jwks_uri: 'https://idp.example/jwks' }, 'no "issuer"'],
    ['no jwks_uri', { issuer: 'i' }, 'no valid "jwks_uri"'],
    ['a relative jwks_uri', { issuer: 'i', jwks_uri: '/jwks' }, 'no valid "jwks_uri"'],
    [
      'a file: jwks_uri',
      { issuer: 'i', jwks_uri: 'file:///etc/jwks' },
      '"jwks_uri" is not an http(s) URL',
    ],
    [
      'an http key set for an https provider',
      { issuer: 'i', jwks_uri: 'http://idp.example/jwks' },
      '"jwks_uri" must use https',
    ],
    [
      'algorithms that are not a list',
      {
        issuer: 'i',
        jwks_uri: 'https://idp.example/jwks',
        id_token_signing_alg_values_supported: 'RS256',
      },
      '"id_token_signing_alg_values_supported" is not a list of strings',
    ],
    [
      'algorithms that are not strings',
      {
        issuer: 'i',
        jwks_uri: 'https://idp.example/jwks',
        id_token_signing_alg_values_supported: ['RS256', 1],
      },
      '"id_token_signing_alg_values_supported" is not a list of strings',
    ],
  ])('%s: ProviderError', async (_what, doc, why) => {
    const { http } = answering(doc);
    const failure = discover(http, HTTPS, true);
    await expect(failure).rejects.toThrow(ProviderError);
    await expect(failure).rejects.toThrow(`OpenID Connect discovery failed: ${why}`);
  });
});
