import { describe, expect, test } from 'vitest';
import { ClientMirror } from '../../../sidecar/replica/client-mirror.js';
import { row } from '../support/clients.js';

// The sidecar's rows of clients (docs/decisions/20261128-bearer-clients-from-the-replica.md,
// docs/decisions/20261202-api-key-clients-from-the-replica.md):
// what it holds must never be older than the last change notified for a client.

describe('ClientMirror', () => {
  test('holds the whole row of each client, by subject when it has one and by id', () => {
    const m = new ClientMirror();
    const svc = row(1, {
      apiClientId: 'svc',
      isAdmin: true,
      permissions: [{ methods: ['GET'], path: '/reports/**' }],
    });
    const key = row(2, { secret: 's' });
    m.put([svc, key], m.reading());
    expect(m.get('svc')).toBe(svc);
    expect(m.get('svc')?.permissions).toEqual([{ methods: ['GET'], path: '/reports/**' }]);
    expect(m.byId(1)).toBe(svc);
    expect(m.byId(2)).toBe(key);
    expect(m.byId(3)).toBeUndefined();
    expect(m.size).toBe(1);
    expect(m.held).toBe(2);
  });

  test('an API key client: a change drops it by id; a read begun before cannot put it back', () => {
    const m = new ClientMirror();
    m.put([row(7, { secret: 'a' })], m.reading());
    const stale = m.reading();
    m.drop([7]);
    expect(m.byId(7)).toBeUndefined();
    m.put([row(7, { secret: 'a', name: 'old' })], stale);
    expect(m.byId(7)).toBeUndefined();
    m.put([row(7, { secret: 'b', name: 'new' })], m.reading());
    expect(m.byId(7)?.name).toBe('new');
    m.gone([7], m.reading());
    expect(m.byId(7)).toBeUndefined();
  });

  test('a change drops the row at once; a read begun before the change cannot put it back', () => {
    const m = new ClientMirror();
    m.put([row(1, { apiClientId: 'svc' })], m.reading());
    const stale = m.reading();
    m.drop([1]);
    expect(m.get('svc')).toBeUndefined();
    // The state the change replaced, read before it (a batch of a load still in flight).
    m.put([row(1, { apiClientId: 'svc', name: 'old' })], stale);
    expect(m.get('svc')).toBeUndefined();
    const fresh = m.reading();
    m.put([row(1, { apiClientId: 'svc', name: 'new' })], fresh);
    expect(m.get('svc')?.name).toBe('new');
    // The drop is over once a fresh read put the row back: later reads put it as usual.
    m.put([row(1, { apiClientId: 'svc', name: 'newer' })], m.reading());
    expect(m.get('svc')?.name).toBe('newer');
  });

  test('a deletion: found gone by a fresh read, the row goes; by a stale one, it stays dropped', () => {
    const m = new ClientMirror();
    m.put([row(1, { apiClientId: 'a' }), row(2, { apiClientId: 'b' })], m.reading());
    m.gone([1], m.reading());
    expect(m.get('a')).toBeUndefined();
    const stale = m.reading();
    m.drop([2]);
    m.gone([2], stale);
    m.put([row(2, { apiClientId: 'b' })], stale);
    expect(m.get('b')).toBeUndefined();
  });

  test('a subject changed: the old one is no longer held, the new one is', () => {
    const m = new ClientMirror();
    m.put([row(1, { apiClientId: 'old' })], m.reading());
    m.drop([1]);
    m.put([row(1, { apiClientId: 'new' })], m.reading());
    expect(m.get('old')).toBeUndefined();
    expect(m.get('new')?.id).toBe(1);
    m.drop([1]);
    m.put([row(1, { secret: 's' })], m.reading());
    expect(m.get('new')).toBeUndefined();
    expect(m.size).toBe(0);
    expect(m.byId(1)?.apiClientId).toBeNull();
  });

  test('a subject moved to another client in one change, in either order of the rows', () => {
    for (const order of [
      [row(2, { apiClientId: 's' }), row(1, { secret: 'k' })],
      [row(1, { secret: 'k' }), row(2, { apiClientId: 's' })],
    ]) {
      const m = new ClientMirror();
      m.put([row(1, { apiClientId: 's' })], m.reading());
      m.drop([1, 2]);
      m.put(order, m.reading());
      expect(m.get('s')?.id).toBe(2);
      expect(m.size).toBe(1);
      expect(m.byId(1)?.apiClientId).toBeNull();
      // Client 1's later change does not take client 2's row with it.
      m.drop([1]);
      expect(m.get('s')?.id).toBe(2);
    }
  });

  test('clear holds nothing and forgets it was filled', () => {
    const m = new ClientMirror();
    m.put([row(1, { apiClientId: 'a' })], m.reading());
    m.filled = true;
    m.clear();
    expect(m.get('a')).toBeUndefined();
    expect(m.filled).toBe(false);
  });
});

describe('ClientMirror bounded', () => {
  test('past its bound it holds no new subject (asked of PostgreSQL), but keeps changes of held ones', () => {
    const m = new ClientMirror(2, 0);
    m.put([row(1, { apiClientId: 'a' }), row(2, { apiClientId: 'b' })], m.reading());
    m.put([row(3, { apiClientId: 'c' })], m.reading());
    expect(m.get('c')).toBeUndefined();
    expect(m.overflowed).toBe(true);
    m.drop([2]);
    m.put([row(2, { apiClientId: 'b', name: 'renamed' })], m.reading());
    expect(m.get('b')?.name).toBe('renamed');
    m.drop([1]);
    m.gone([1], m.reading());
    m.put([row(3, { apiClientId: 'c' })], m.reading());
    expect(m.get('c')?.id).toBe(3);
  });
});

describe('ClientMirror bounded apart', () => {
  test('rows without a subject have a bound of their own: they never crowd out bearer clients', () => {
    const m = new ClientMirror(1, 2);
    m.put([row(1, { secret: 'a' }), row(2, { secret: 'b' }), row(3, { secret: 'c' })], m.reading());
    expect([m.byId(1), m.byId(2), m.byId(3)].map((r) => r?.id)).toEqual([1, 2, undefined]);
    expect(m.overflowed).toBe(true);
    m.put([row(4, { apiClientId: 's' })], m.reading());
    expect(m.get('s')?.id).toBe(4);
    m.put([row(5, { apiClientId: 't' })], m.reading());
    expect(m.get('t')).toBeUndefined();
  });
});
