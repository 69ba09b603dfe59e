import { once } from 'node:events';
import { GatewayContainer } from 'authenticating-gateway/testcontainers';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { createApp } from './app.mjs';

let server;
let gateway;

beforeAll(async () => {
  // The app listens on every interface (the gateway's proxy reaches it from a container).
  server = createApp().listen(0);
  await once(server, 'listening');
  gateway = await new GatewayContainer().withHostApp(server.address().port).start();
}, 300_000);

afterAll(async () => {
  await gateway?.stop();
  server?.close();
});

test('an unauthenticated call gets 401', async () => {
  const answer = await gateway.request('/orders');
  expect(answer.status).toBe(401);
  expect(JSON.parse(answer.body).errors[0].code).toBe('MISSING_CREDENTIALS');
});

test('a key gets through, and the app sees who called (never the key)', async () => {
  const client = await gateway.createClient({ name: 'billing' });
  const answer = await gateway.request('/orders', { key: client.key });
  expect(answer.status).toBe(200);
  expect(JSON.parse(answer.body)).toEqual({
    path: '/orders',
    clientId: String(client.id),
    clientName: 'billing',
    isAdmin: false,
    sawAuthorization: false,
  });
});

test('a revoked key is refused', async () => {
  const client = await gateway.createClient({ name: 'leaver' });
  expect((await gateway.request('/orders', { key: client.key })).status).toBe(200);
  await gateway.revokeClient(client);
  expect((await gateway.request('/orders', { key: client.key })).status).toBe(401);
});
