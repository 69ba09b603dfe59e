import { describe, expect, test } from 'vitest';
import { optionsFromEnv, SettingsError } from '../../../engine/index.js';
import { resolveSettings } from '../../../engine/settings.js';

describe('environment', () => {
  test('defaults: 127.0.0.1:8080, no admin password (one is generated), default versions', () => {
    expect(optionsFromEnv({})).toMatchObject({
      host: '127.0.0.1',
      port: 8080,
      adminPassword: undefined,
      versions: undefined,
    });
    expect(resolveSettings(optionsFromEnv({}))).toEqual({
      versions: [
        { major: 2, minor: 1, micro: 0 },
        { major: 1, minor: 2, micro: 0 },
      ],
      adminUser: 'admin',
      sessionIdleMs: 1_800_000,
      maxSessions: 10_000,
      maxBodyBytes: 65_536,
      cookieSecure: 'auto',
      defaultLocale: 'en_US',
    });
  });

  test('every variable is read', () => {
    const options = optionsFromEnv({
      ENGINE_HOST: '0.0.0.0',
      ENGINE_PORT: '9000',
      ENGINE_ADMIN_USER: 'root',
      ENGINE_ADMIN_PASSWORD: ' spaces kept ',
      ENGINE_API_VERSIONS: '1.4.2, 3.0.1',
      ENGINE_SESSION_IDLE_SECONDS: '60',
      ENGINE_MAX_SESSIONS: '5',
      ENGINE_MAX_BODY_BYTES: '2048',
      ENGINE_COOKIE_SECURE: 'always',
      ENGINE_LOCALE: 'de_CH',
    });
    expect(options).toMatchObject({ host: '0.0.0.0', port: 9000, adminPassword: ' spaces kept ' });
    expect(resolveSettings(options)).toEqual({
      versions: [
        { major: 3, minor: 0, micro: 1 },
        { major: 1, minor: 4, micro: 2 },
      ],
      adminUser: 'root',
      sessionIdleMs: 60_000,
      maxSessions: 5,
      maxBodyBytes: 2048,
      cookieSecure: 'always',
      defaultLocale: 'de_CH',
    });
  });

  test('an empty ENGINE_ADMIN_PASSWORD counts as unset, so a password is generated', () => {
    expect(optionsFromEnv({ ENGINE_ADMIN_PASSWORD: '' }).adminPassword).toBeUndefined();
  });

  test('malformed variables are all reported at once', () => {
    const attempt = () =>
      optionsFromEnv({
        ENGINE_PORT: 'http',
        ENGINE_API_VERSIONS: '2.1, 1.0.0',
        ENGINE_MAX_SESSIONS: '-3',
      });
    expect(attempt).toThrow(SettingsError);
    try {
      attempt();
    } catch (err) {
      expect((err as SettingsError).problems).toEqual([
        'ENGINE_PORT must be a non-negative integer, not "http"',
        'ENGINE_API_VERSIONS: "2.1" is not major.minor.micro',
        'ENGINE_MAX_SESSIONS must be a non-negative integer, not "-3"',
      ]);
    }
  });

  test('settings that cannot work are all reported at once', () => {
    try {
      resolveSettings({
        versions: [
          { major: 2, minor: 0, micro: 0 },
          { major: 2, minor: 1, micro: 0 },
        ],
        adminUser: 'has space',
        sessionIdleSeconds: 0,
        maxSessions: 0,
        cookieSecure: 'sometimes' as 'auto',
        defaultLocale: 'english',
      });
      expect.unreachable();
    } catch (err) {
      expect((err as SettingsError).problems).toHaveLength(6);
      expect((err as SettingsError).message).toContain('API major 2 is listed twice');
    }
    expect(() => resolveSettings({ versions: [] })).toThrow('at least one API version');
  });

  test('ENGINE_LOG_REQUESTS: true or false (unset: no request log); anything else is refused', () => {
    expect(optionsFromEnv({}).logRequests).toBeUndefined();
    expect(optionsFromEnv({ ENGINE_LOG_REQUESTS: 'true' }).logRequests).toBe(true);
    expect(optionsFromEnv({ ENGINE_LOG_REQUESTS: 'false' }).logRequests).toBe(false);
    expect(() => optionsFromEnv({ ENGINE_LOG_REQUESTS: 'yes' })).toThrow(
      'ENGINE_LOG_REQUESTS must be true or false',
    );
  });
});
