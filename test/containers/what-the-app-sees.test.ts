import {
  GenericContainer,
  Network,
  type StartedNetwork,
  type StartedTestContainer,
} from 'testcontainers';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { GatewayContainer, type StartedGatewayContainer } from '../../testcontainers/index.js';
import { IMAGES, testLabels } from '../support/container-engine.js';

/**
 * What the application behind the containers' gateway receives (issue 53; the native twin is
 * test/e2e/what-the-app-sees.test.ts): no method or URL override header, and no path it could
 * read as `..`. The application is a header echo of the test's own, run from the app image's
 * Node on the user's network, in front of which the testcontainers module starts the images.
 */

const ECHO = `require('node:http').createServer((req, res) => {
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify({ method: req.method, url: req.url, headers: req.headers }));
}).listen(8080);`;

/** The method and URL override headers common stacks act on (docs/managing-clients.md). */
const OVERRIDES = {
  'x-http-method-override': 'DELETE',
  'x-http-method': 'DELETE',
  'x-method-override': 'DELETE',
  'x-original-url': '/admin',
  'x-rewrite-url': '/admin',
  'x-forwarded-host': 'evil.example',
  'x-forwarded-prefix': '/admin',
  forwarded: 'host=evil.example;proto=http',
};

let network: StartedNetwork;
let echo: StartedTestContainer;
let gateway: StartedGatewayContainer;
let key: string;

beforeAll(async () => {
  network = await new Network().start();
  echo = await new GenericContainer(IMAGES.app)
    .withNetwork(network)
    .withNetworkAliases('echo')
    .withLabels(testLabels())
    .withEntrypoint(['node', '-e', ECHO])
    .start();
  gateway = await new GatewayContainer().withNetwork(network).withApp('echo:8080').start();
  const made = await gateway.request('/v1/management/api-clients', {
    method: 'POST',
    key: gateway.getAdminKey(),
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      name: 'orders-only',
      is_admin: false,
      generate_api_key: true,
      permissions: [{ methods: ['POST'], path: '/orders/**' }],
    }),
  });
  expect(made.status, made.body).toBe(201);
  key = (JSON.parse(made.body) as { token: string }).token;
}, 300_000);

afterAll(async () => {
  await gateway?.stop();
  await echo?.stop().catch(() => {});
  await network?.stop().catch(() => {});
}, 120_000);

describe('containers: a client allowed only POST /orders/**', () => {
  test('its POST reaches the application as a POST with none of the override headers', async () => {
    for (let i = 0; i < 3; i += 1) {
      const answer = await gateway.request('/orders/7', {
        method: 'POST',
        key,
        headers: OVERRIDES,
      });
      expect(answer.status, answer.body).toBe(200);
      const seen = JSON.parse(answer.body) as { method: string; headers: Record<string, string> };
      expect(seen.method).toBe('POST');
      for (const name of Object.keys(OVERRIDES)) expect(seen.headers[name], name).toBeUndefined();
    }
  });

  test.each(['/files/..%20', '/files/...', '/files/%C0%AE%C0%AE', '/orders/..%20/x'])(
    '%s is 400 BAD_PATH in the one error shape and never reaches the application',
    async (path) => {
      const answer = await gateway.request(path, { method: 'POST', key });
      expect(answer.status).toBe(400);
      expect(JSON.parse(answer.body)).toEqual({
        errors: [expect.objectContaining({ code: 'BAD_PATH' })],
      });
      // The echo would have answered with the request it saw.
      expect(answer.body).not.toContain('"headers"');
    },
  );
});
