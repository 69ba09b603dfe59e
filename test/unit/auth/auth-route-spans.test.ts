import { trace } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { beforeAll, describe, expect, test } from 'vitest';
import { ApiKeyVerifier } from '../../../sidecar/auth/api-key-verifier.js';
import { createAuthDecider } from '../../../sidecar/auth/auth-route.js';
import { Authenticator } from '../../../sidecar/auth/authenticator.js';
import { SidecarMetrics } from '../../../sidecar/metrics/sidecar-metrics.js';
import type { ProofGate } from '../../../sidecar/proof/proof-gate.js';
import { tracingStarted } from '../../../sidecar/tracing/tracer.js';
import { STAND_IN_FOR_NGINX } from '../../support/nginx-stand-in.js';
import { directoryOf, row } from '../support/clients.js';
import { recordingLogger } from '../support/serve.js';

// The decision's span with the SDK's own provider and an in-memory exporter (this file's worker
// has a global provider of its own; the other unit tests run with tracing off).
const SECRET = 's'.repeat(43);
const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const NGINX_SPAN = '00f067aa0ba902b7';
const exporter = new InMemorySpanExporter();
const { log } = recordingLogger();
const decide = (proof: ProofGate = STAND_IN_FOR_NGINX) =>
  createAuthDecider(
    new Authenticator(new ApiKeyVerifier(directoryOf([row(3, { secret: SECRET })])), null),
    log,
    proof,
  );
const question = (authorization: string, extra: Record<string, string> = {}) => {
  const headers: Record<string, string> = {
    authorization,
    'x-gateway-api-keys-enabled': 'true',
    'x-original-method': 'GET',
    'x-original-uri': '/api/things?secret=never-in-a-span',
    traceparent: `00-${TRACE_ID}-${NGINX_SPAN}-01`,
    ...extra,
  };
  return { headers, rawHeaders: Object.entries(headers).flat() };
};

beforeAll(() => {
  trace.setGlobalTracerProvider(
    new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }),
  );
  tracingStarted();
});

describe("the /auth decision's span (tracing on)", () => {
  test("an allowed key: a server span, child of nginx's, with the request and the client id", async () => {
    exporter.reset();
    const answer = await decide()(question(`apk 3.${SECRET}`));
    expect(answer.status).toBe(204);
    const [span, ...others] = exporter.getFinishedSpans();
    expect(others).toEqual([]);
    expect(span!.name).toBe('auth decision');
    expect(span!.spanContext().traceId).toBe(TRACE_ID);
    expect(span!.parentSpanContext?.spanId).toBe(NGINX_SPAN);
    expect(span!.attributes).toEqual({
      'http.request.method': 'GET',
      'url.path': '/api/things',
      'gateway.auth.method': 'apk',
      'gateway.auth.outcome': 'allowed',
      'http.response.status_code': 204,
      'enduser.id': '3',
    });
  });

  test('a refused key: the outcome and 401, no client id, never the secret', async () => {
    exporter.reset();
    const answer = await decide()(question(`apk 3.${'x'.repeat(43)}`));
    expect(answer.status).toBe(401);
    const [span] = exporter.getFinishedSpans();
    expect(span!.attributes).toEqual({
      'http.request.method': 'GET',
      'url.path': '/api/things',
      'gateway.auth.method': 'apk',
      'gateway.auth.outcome': 'INVALID_API_KEY',
      'http.response.status_code': 401,
    });
    expect(JSON.stringify(span!.attributes)).not.toContain('x'.repeat(43));
  });

  test('nginx sent no method or URI: the span has neither attribute', async () => {
    exporter.reset();
    const q = question(`apk 3.${SECRET}`);
    delete q.headers['x-original-method'];
    delete q.headers['x-original-uri'];
    await decide()({ headers: q.headers, rawHeaders: Object.entries(q.headers).flat() });
    const [span] = exporter.getFinishedSpans();
    expect(Object.keys(span!.attributes)).not.toContain('http.request.method');
    expect(Object.keys(span!.attributes)).not.toContain('url.path');
  });

  test('an unsampled parent: nothing recorded', async () => {
    exporter.reset();
    await decide()(question(`apk 3.${SECRET}`, { traceparent: `00-${TRACE_ID}-${NGINX_SPAN}-00` }));
    expect(exporter.getFinishedSpans()).toEqual([]);
  });
});

describe("nginx's proof, read again after a refusal", () => {
  const gate = (first: boolean, again: boolean): ProofGate => ({
    check: () => (first ? { ok: true } : { ok: false, reason: 'wrong' }),
    recheck: async () => (again ? { ok: true } : { ok: false, reason: 'wrong' }),
  });

  test('refused, then proven by the file read again (a rotation): decided as usual', async () => {
    expect((await decide(gate(false, true))(question(`apk 3.${SECRET}`))).status).toBe(204);
  });

  test('refused both times: the unproven answer, no decision, counted at the auth door', async () => {
    const metrics = new SidecarMetrics();
    const decider = createAuthDecider(
      new Authenticator(new ApiKeyVerifier(directoryOf([row(3, { secret: SECRET })])), null),
      log,
      gate(false, false),
      metrics,
    );
    const answer = await decider(question(`apk 3.${SECRET}`));
    expect(answer.status).toBe(403);
    expect(answer.body).toContain('GATEWAY_PROOF_REQUIRED');
    expect(await metrics.text()).toMatch(
      /^gateway_sidecar_unproven_requests_total\{route="auth",reason="wrong"\} 1$/m,
    );
    expect(await metrics.text()).not.toMatch(/^gateway_auth_decisions_total\{/m);
  });

  test('proven at once: the file is not read again', async () => {
    let rechecked = false;
    const proof: ProofGate = {
      check: () => ({ ok: true }),
      recheck: async () => {
        rechecked = true;
        return { ok: false, reason: 'wrong' };
      },
    };
    expect((await decide(proof)(question(`apk 3.${SECRET}`))).status).toBe(204);
    expect(rechecked).toBe(false);
  });
});
