import { describe, expect, test } from 'vitest';
import { parseSettings, SettingsError } from '../../../generator/index.js';
import { defaultConfModel } from '../../../generator/template-model.js';
import { proxyAddressProblem } from '../../../generator/trusted-proxies.js';

// request_id.trusted_proxies (docs/decisions/20261125-trusted-request-id.md and
// 20261127-caller-address-behind-a-balancer.md): what the settings accept, what they refuse and
// why, the geo/map the model gets from them, and realip (the caller's address) from the same.

const trusting = (trusted_proxies: unknown) => parseSettings({ request_id: { trusted_proxies } });

/** The messages parseSettings gives for these trusted proxies. */
function refusal(trusted_proxies: unknown): string {
  try {
    trusting(trusted_proxies);
  } catch (err) {
    if (err instanceof SettingsError) return err.message;
    throw err;
  }
  throw new Error('accepted');
}

describe('request_id.trusted_proxies', () => {
  test('off by default: nginx always answers its own id', () => {
    const settings = parseSettings({});
    expect(settings.request_id.trusted_proxies).toEqual([]);
    expect(defaultConfModel(settings).requestId).toEqual({
      variable: '$gateway_request_id',
      generated: '$request_id',
      trusted: null,
    });
  });

  test.each([
    '10.0.0.0/8',
    '192.0.2.7',
    '192.0.2.7/32',
    '0.0.0.0/1',
    'fd00::/8',
    '::1',
    '2001:db8::1/128',
    '::ffff:192.0.2.1',
  ])('accepts %s', (entry) => {
    expect(proxyAddressProblem(entry)).toBeNull();
    expect(trusting([entry]).request_id.trusted_proxies).toEqual([entry]);
  });

  test('refuses the whole internet, by family, saying why', () => {
    for (const every of ['0.0.0.0/0', '::/0', '10.0.0.0/0']) {
      expect(proxyAddressProblem(every)).toBe(
        `${every} is every address, so an id from the open internet would be trusted; name the balancer's addresses`,
      );
    }
    expect(refusal(['10.0.0.1', '0.0.0.0/0'])).toContain(
      'request_id.trusted_proxies[1]: 0.0.0.0/0 is every address',
    );
  });

  test('refuses what is not an address or a block', () => {
    expect(proxyAddressProblem('balancer')).toBe(
      'expected an IP address or a CIDR block such as 10.0.0.0/8, got "balancer"',
    );
    expect(proxyAddressProblem('10.0.0.1 1;')).toMatch(/^expected an IP address/);
    expect(proxyAddressProblem('10.0.0.1/8/8')).toMatch(/^expected an IP address/);
    expect(proxyAddressProblem('1')).toMatch(/^expected an IP address/);
    expect(proxyAddressProblem('a'.repeat(46))).toMatch(/^expected an IP address/);
    expect(proxyAddressProblem(`${'a:'.repeat(22)}a`)).toBe(
      `"${'a:'.repeat(22)}a" is not an IPv4 or IPv6 address`,
    );
    expect(proxyAddressProblem('256.0.0.1')).toBe('"256.0.0.1" is not an IPv4 or IPv6 address');
    expect(proxyAddressProblem('10.0.0.0/33')).toBe(
      'the prefix length of 10.0.0.0/33 must be at most 32',
    );
    expect(proxyAddressProblem('fd00::/129')).toBe(
      'the prefix length of fd00::/129 must be at most 128',
    );
    expect(proxyAddressProblem('fd00::/128')).toBeNull();
    expect(proxyAddressProblem('10.0.0.0/32')).toBeNull();
  });

  test('every problem at once; a repeated entry, more than 64, or not a list', () => {
    const message = refusal(['x', '10.0.0.0/0']);
    expect(message).toContain('request_id.trusted_proxies[0]: expected an IP address');
    expect(message).toContain('request_id.trusted_proxies[1]: 10.0.0.0/0 is every address');
    expect(refusal(['10.0.0.1', '10.0.0.1'])).toContain('lists an address twice');
    const many = Array.from({ length: 65 }, (_, i) => `10.0.0.${i}`);
    expect(refusal(many)).toContain('request_id.trusted_proxies');
    expect(trusting(many.slice(0, 64)).request_id.trusted_proxies).toHaveLength(64);
    expect(refusal('10.0.0.1')).toContain('request_id.trusted_proxies');
    expect(() => parseSettings({ request_id: { trusted: [] } })).toThrow(SettingsError);
  });

  test('trusted proxies render a geo on the peer and a map that keeps only a well-formed id', () => {
    const model = defaultConfModel(trusting(['10.89.0.0/24', 'fd00::/8']));
    expect(model.requestId).toEqual({
      variable: '$gateway_request_id',
      generated: '$request_id',
      trusted: {
        // The connection's own peer: realip (below) rewrites $remote_addr to the caller's.
        peerAddress: '$realip_remote_addr',
        peerVariable: '$gateway_request_id_trusted_peer',
        proxies: ['10.89.0.0/24', 'fd00::/8'],
        source: '"$gateway_request_id_trusted_peer:$http_x_request_id"',
        keep: '"~^1:(?<gateway_caller_request_id>[A-Za-z0-9._-]{1,64})$"',
        callerVariable: '$gateway_caller_request_id',
      },
    });
  });

  // docs/decisions/20261127-caller-address-behind-a-balancer.md
  test("the same proxies name the caller's address: realip from them, X-Forwarded-For, recursive", () => {
    expect(defaultConfModel(trusting(['10.89.0.0/24', 'fd00::/8'])).callerAddress).toEqual({
      from: ['10.89.0.0/24', 'fd00::/8'],
      header: 'X-Forwarded-For',
      recursive: 'on',
    });
  });

  test("no trusted proxy: no realip at all, $remote_addr is always the connection's peer", () => {
    expect(defaultConfModel(parseSettings({})).callerAddress).toBeNull();
  });
});
