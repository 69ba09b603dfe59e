import { describe, expect, test } from 'vitest';
import { refuse } from '../../../sidecar/auth/decision.js';
import { readToggles } from '../../../sidecar/auth/method-toggles.js';
import { refusalError } from '../../../sidecar/auth/refusal.js';
import { ApiError } from '../../../sidecar/errors/api-error.js';

const oidcOn = { ...readToggles({}), oidc: true };

describe('refusalError', () => {
  test('401 in the one error shape, with the challenge', () => {
    const error = refusalError(
      refuse('INVALID_API_KEY', 'The API key is not valid.'),
      readToggles({}),
    );
    expect(error).toBeInstanceOf(ApiError);
    expect(error.status).toBe(401);
    expect(error.body()).toEqual({
      errors: [{ code: 'INVALID_API_KEY', message: 'The API key is not valid.' }],
    });
    expect(error.headers).toEqual({ 'WWW-Authenticate': 'apk' });
  });

  test('a bearer failure carries X-jwt-error', () => {
    const error = refusalError(
      refuse('INVALID_TOKEN', 'bad', { scheme: 'bearer', jwtError: 'token expired' }),
      oidcOn,
    );
    expect(error.headers).toEqual({
      'WWW-Authenticate': 'Bearer error="invalid_token"',
      'X-jwt-error': 'token expired',
    });
  });

  test('an empty jwt error is still sent', () => {
    const error = refusalError(refuse('INVALID_TOKEN', 'bad', { jwtError: '' }), oidcOn);
    expect(error.headers['X-jwt-error']).toBe('');
  });

  test('X-jwt-error is visible ASCII only, at most 500 characters', () => {
    const error = refusalError(
      refuse('INVALID_TOKEN', 'bad', { jwtError: `é\r\nx\u0000~ ${'y'.repeat(600)}` }),
      oidcOn,
    );
    const value = error.headers['X-jwt-error']!;
    expect(value.startsWith('???x?~ yyy')).toBe(true);
    expect(value).toHaveLength(500);
  });
});

describe('refuse', () => {
  test('builds a failure value with the extras given', () => {
    expect(refuse('UNKNOWN_CLIENT', 'm', { scheme: 'bearer', jwtError: 'e' })).toEqual({
      ok: false,
      code: 'UNKNOWN_CLIENT',
      message: 'm',
      scheme: 'bearer',
      jwtError: 'e',
    });
    expect(refuse('MISSING_CREDENTIALS', 'm')).toEqual({
      ok: false,
      code: 'MISSING_CREDENTIALS',
      message: 'm',
    });
  });
});
