import { describe, expect, test } from 'vitest';
import { ApiKeyVerifier } from '../../../sidecar/auth/api-key-verifier.js';
import { type AuthObserver, NO_OBSERVER, observers } from '../../../sidecar/auth/auth-observer.js';
import { Authenticator } from '../../../sidecar/auth/authenticator.js';
import { readToggles } from '../../../sidecar/auth/method-toggles.js';
import { directoryOf, row } from '../support/clients.js';

const SECRET = 's'.repeat(43);

function recorder() {
  const seen: string[] = [];
  const observer: AuthObserver = {
    accepted: (identity) => seen.push(`yes ${identity.id}`),
    refused: (failure) => seen.push(`no ${failure.code} ${failure.clientRow ?? '-'}`),
  };
  return { seen, observer };
}

describe('AuthObserver', () => {
  test('the authenticator tells it every decision, accepted and refused, with the client named', async () => {
    const { seen, observer } = recorder();
    const auth = new Authenticator(
      new ApiKeyVerifier(directoryOf([row(1, { secret: SECRET })])),
      null,
      observer,
    );
    const toggles = readToggles({});
    await auth.authenticate(['Authorization', `apk 1.${SECRET}`], toggles);
    await auth.authenticate(['Authorization', `apk 1.${'x'.repeat(43)}`], toggles);
    await auth.authenticate(['Authorization', `apk 7.${SECRET}`], toggles);
    await auth.authenticate([], toggles);
    expect(seen).toEqual([
      'yes 1',
      'no INVALID_API_KEY 1',
      'no INVALID_API_KEY -',
      'no MISSING_CREDENTIALS -',
    ]);
  });

  test('observers() tells each in turn; NO_OBSERVER does nothing', () => {
    const a = recorder();
    const b = recorder();
    const both = observers(a.observer, b.observer);
    both.accepted({ id: 4, clientId: '4', clientName: 'x', isAdmin: false });
    both.refused({ ok: false, code: 'INVALID_TOKEN', message: 'm', clientRow: 9 });
    expect(a.seen).toEqual(['yes 4', 'no INVALID_TOKEN 9']);
    expect(b.seen).toEqual(a.seen);
    expect(() => {
      NO_OBSERVER.accepted({ id: 1, clientId: '1', clientName: 'x', isAdmin: false });
      NO_OBSERVER.refused({ ok: false, code: 'INVALID_TOKEN', message: 'm' });
    }).not.toThrow();
  });
});
