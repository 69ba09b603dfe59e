import { createSocket } from 'node:dgram';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { freshDatabase } from '../../support/database.js';
import { freePort } from '../../support/embedded-postgres.js';
import { http } from '../../support/http.js';
import { CLIENTS, uniqueName } from '../../support/management.js';
import { type OidcSetup, startOidcSetup } from '../../support/oidc-setup.js';
import {
  type OtlpReceiver,
  type ReceivedSpan,
  startOtlpReceiver,
} from '../../support/otlp-receiver.js';
import { apk } from '../../support/sidecar.js';

// The sidecar's spans (docs/decisions/20261202-trace-context.md) through the SDK's own OTLP/HTTP
// exporter to a receiver that decodes them with the official protobuf definitions: children of
// the span nginx names in traceparent, semantic-convention attributes, never a credential.
let receiver: OtlpReceiver;
let setup: OidcSetup;
let token: string;
let n = 0;
let spansPort: number;

// The batch processor's delay (the SDK reads it from the environment): spans arrive quickly.
process.env.OTEL_BSP_SCHEDULE_DELAY = '50';

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  const databaseUrl = await freshDatabase();
  spansPort = await freePort();
  setup = await startOidcSetup(databaseUrl, ['svc-traced'], {
    TRACING_OTLP_ENDPOINT: receiver.url,
    TRACING_NGINX_SPANS_LISTEN: `127.0.0.1:${spansPort}`,
  });
  await setup.addClient('svc-traced', { name: 'Traced service' });
  token = await setup.provider.issueToken('svc-traced');
});
afterAll(async () => {
  await setup?.close();
  await receiver?.close();
});

/** A fresh trace id (32 hex) and nginx's span id (16 hex) as nginx would send them. */
function nginxSpan(flags = '01') {
  n += 1;
  const traceId = `${'a'.repeat(24)}${n.toString(16).padStart(8, '0')}`;
  const spanId = `${'b'.repeat(8)}${n.toString(16).padStart(8, '0')}`;
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-${flags}` };
}

const inTrace = (traceId: string, name: string) => (spans: ReceivedSpan[]) =>
  spans.find((s) => s.traceId === traceId && s.name === name);

describe('a bearer token seen for the first time', () => {
  test('its decision is a child of nginx’s span, and the key set fetch a child of the decision', async () => {
    const nginx = nginxSpan();
    const res = await setup.auth(token, { traceparent: nginx.traceparent });
    expect(res.status, res.text).toBe(204);
    const spans = await receiver.waitFor(
      (all) =>
        !!inTrace(nginx.traceId, 'auth decision')(all) &&
        !!inTrace(nginx.traceId, 'oidc jwks fetch')(all),
    );
    const decision = inTrace(nginx.traceId, 'auth decision')(spans)!;
    expect(decision.parentSpanId).toBe(nginx.spanId);
    expect(decision.service).toBe('gateway-sidecar');
    expect(decision.attributes).toMatchObject({
      'http.request.method': 'GET',
      'url.path': '/data',
      'gateway.auth.method': 'bearer',
      'gateway.auth.outcome': 'allowed',
      'http.response.status_code': 204,
      'enduser.id': res.headers['x-client-id'],
    });
    const fetch = inTrace(nginx.traceId, 'oidc jwks fetch')(spans)!;
    expect(fetch.parentSpanId).toBe(decision.spanId);
    expect(fetch.attributes['url.path']).toMatch(/^\//);
  });

  test('a refusal is recorded with its outcome', async () => {
    const nginx = nginxSpan();
    const res = await setup.auth(`${token.slice(0, -4)}AAAA`, { traceparent: nginx.traceparent });
    expect(res.status).toBe(401);
    const [decision] = [
      await receiver.waitFor((all) => !!inTrace(nginx.traceId, 'auth decision')(all)),
    ].map((all) => inTrace(nginx.traceId, 'auth decision')(all)!);
    expect(decision!.attributes).toMatchObject({
      'gateway.auth.method': 'bearer',
      'http.response.status_code': 401,
    });
    expect(decision!.attributes['enduser.id']).toBeUndefined();
  });

  test('an unsampled trace, or none at all, records no span', async () => {
    const unsampled = nginxSpan('00');
    expect((await setup.auth(token, { traceparent: unsampled.traceparent })).status).toBe(204);
    expect((await setup.auth(token)).status).toBe(204);
    // A sampled one after both: once it is in, the two before it would be too.
    const after = nginxSpan();
    expect((await setup.auth(token, { traceparent: after.traceparent })).status).toBe(204);
    await receiver.waitFor((all) => !!inTrace(after.traceId, 'auth decision')(all));
    expect(receiver.spans.filter((s) => s.traceId === unsampled.traceId)).toEqual([]);
    const traced = new Set(receiver.spans.map((s) => s.traceId));
    expect(receiver.spans.filter((s) => s.parentSpanId === '')).toEqual([]);
    expect(traced.has(unsampled.traceId)).toBe(false);
  });
});

describe('a management request', () => {
  test('a create is a server span, child of nginx’s, with its status and the admin’s client id', async () => {
    const nginx = nginxSpan();
    const res = await http(`${setup.sidecar.url}${CLIENTS}`, {
      method: 'POST',
      headers: { ...apk(setup.sidecar.adminKey), traceparent: nginx.traceparent },
      json: { name: uniqueName('traced'), is_admin: false, generate_api_key: true },
    });
    expect(res.status, res.text).toBe(201);
    const spans = await receiver.waitFor((all) => !!inTrace(nginx.traceId, 'POST management')(all));
    const span = inTrace(nginx.traceId, 'POST management')(spans)!;
    expect(span.parentSpanId).toBe(nginx.spanId);
    expect(span.attributes).toMatchObject({
      'http.request.method': 'POST',
      'url.path': CLIENTS,
      'http.response.status_code': 201,
      'enduser.id': expect.any(String),
    });
    // Its database work and audit event, as children.
    const all = await receiver.waitFor((got) => !!inTrace(nginx.traceId, 'audit event')(got));
    const transaction = inTrace(nginx.traceId, 'db transaction')(all)!;
    expect(transaction.parentSpanId).toBe(span.spanId);
    expect(transaction.attributes['db.system.name']).toBe('postgresql');
    expect(inTrace(nginx.traceId, 'db change')(all)!.parentSpanId).toBe(transaction.spanId);
    const audit = inTrace(nginx.traceId, 'audit event')(all)!;
    expect(audit.parentSpanId).toBe(transaction.spanId);
    expect(audit.attributes).toMatchObject({
      'gateway.audit.action': expect.stringMatching(/create/),
      'gateway.audit.outcome': 'success',
    });
    // The canary: neither the admin's key nor the new key nor the token is in any export.
    const created = (res.json as { token: string }).token;
    const exported = Buffer.concat(receiver.bodies).toString('latin1');
    for (const secret of [setup.sidecar.adminKey, created, token, token.split('.')[2]!]) {
      expect(secret.length).toBeGreaterThan(10);
      expect(exported.includes(secret), 'a credential in an exported span').toBe(false);
    }
  });
});

describe("nginx's span records", () => {
  /** A datagram as nginx's gateway_span_log sends it (nginx-trace-context.test.ts reads real ones). */
  async function send(text: string): Promise<void> {
    const socket = createSocket('udp4');
    await new Promise<void>((resolve, reject) =>
      socket.send(text, spansPort, '127.0.0.1', (err) => (err ? reject(err) : resolve())),
    );
    socket.close();
  }

  test('each becomes the gateway’s span, exported with its ids, times and attributes', async () => {
    const nginx = nginxSpan();
    const parent = 'c'.repeat(16);
    const end = Date.now() / 1000;
    await send('<190>not a record');
    const record = [
      nginx.traceId,
      nginx.spanId,
      parent,
      end.toFixed(3),
      '0.012',
      'GET',
      '200',
      'apk',
      'svc%20one',
      '/data',
    ].join(' ');
    await send(`${Buffer.byteLength(record)}:${record}`);
    const spans = await receiver.waitFor((all) => !!inTrace(nginx.traceId, 'gateway GET')(all));
    const span = inTrace(nginx.traceId, 'gateway GET')(spans)!;
    expect(span).toMatchObject({
      spanId: nginx.spanId,
      parentSpanId: parent,
      service: 'gateway',
      kind: 2, // SPAN_KIND_SERVER in OTLP's numbering
    });
    expect(span.attributes).toEqual({
      'http.request.method': 'GET',
      'url.path': '/data',
      'http.response.status_code': 200,
      'enduser.id': 'svc one',
      'gateway.auth.method': 'apk',
    });
  });
});
