import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type GatewayUnderTest, startGateway } from './support/gateway-harness.js';
import { https } from './support/https-client.js';

// A sidecar known by a DNS name (the containers' `gateway:8081`; `localhost` here) is asked in
// one hop, at the address nginx's master resolved when it loaded the configuration
// (lua/gateway/sidecar/address.lua), not through nginx's control socket: the stub sidecar
// sees an auth frame, where the control socket's route would be an HTTP request from nginx's
// upstream (Host: gateway_sidecar).

describe.each([
  ['an IPv4 literal', '127.0.0.1'],
  ['a DNS name', 'localhost'],
])('the sidecar named by %s', (_, sidecarHost) => {
  let gw: GatewayUnderTest;
  beforeAll(async () => {
    gw = await startGateway({ sidecarHost });
  });
  afterAll(async () => {
    await gw?.stop();
  });

  test('is asked in one hop, and its answer decides', async () => {
    const res = await https(gw.httpsPort, '/hello', gw.ca, {
      headers: { Authorization: 'Bearer some-token' },
    });
    expect(res.status).toBe(200);
    const calls = gw.authCalls();
    expect(calls.map((call) => call.frame === true)).toEqual([true]);
    expect(calls.map((call) => call.headers.host)).toEqual([undefined]);
    expect(gw.stubApp.requests.map((r) => r.headers['x-client-id'])).toEqual(['1']);
  });
});
