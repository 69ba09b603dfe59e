import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { freePort } from '../support/embedded-postgres.js';
import { http } from '../support/http.js';
import { waitForLogLine } from '../support/log-lines.js';
import { createClient, uniqueName } from '../support/management.js';
import { launchNativeGateway, type NativeGatewayProcess } from '../support/native-gateway.js';
import { type OtlpReceiver, startOtlpReceiver } from '../support/otlp-receiver.js';
import { apk } from '../support/sidecar.js';

// A caller's trace through the real native gateway (nginx, the sidecar, the engine as processes)
// to an OTLP/HTTP receiver decoding with the official protobuf definitions: continued from a
// trusted peer (127.0.0.1 here, as a balancer), the gateway's span exported from nginx's record,
// the engine's log naming the trace, and no credential in any span or log.
const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';

let home: string;
let gw: NativeGatewayProcess;
let receiver: OtlpReceiver;
let user: { id: number; token: string };

beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), 'gw-trace-'));
  receiver = await startOtlpReceiver();
  const spansPort = await freePort();
  const settingsFile = join(home, 'gateway.yaml');
  await writeFile(
    settingsFile,
    [
      'request_id:',
      '  trusted_proxies: [127.0.0.1]',
      'tracing:',
      '  enabled: true',
      '  sample_ratio: 0',
      `  otlp_endpoint: ${receiver.url}`,
      `  nginx_spans_to: 127.0.0.1:${spansPort}`,
      '',
    ].join('\n'),
  );
  gw = await launchNativeGateway({
    home,
    env: {
      API_KEY_CREATE: 'true',
      GATEWAY_SETTINGS: settingsFile,
      TRACING_OTLP_ENDPOINT: receiver.url,
      TRACING_NGINX_SPANS_LISTEN: `127.0.0.1:${spansPort}`,
      OTEL_BSP_SCHEDULE_DELAY: '100',
      LOG_LEVEL: 'debug',
      ENGINE_LOG_REQUESTS: 'true',
    },
  });
  user = await createClient(
    gw.loopbackUrl,
    gw.adminKey,
    { name: uniqueName('traced'), is_admin: false, generate_api_key: true },
    { ca: gw.ca, servername: gw.fqdn },
  );
}, 180_000);
afterAll(async () => {
  await gw?.stop();
  await receiver?.close();
  await rm(home, { recursive: true, force: true });
});

test("a trusted caller's trace runs through nginx, the sidecar and the engine, and no span or log holds the key", async () => {
  const res = await http(`${gw.loopbackUrl}/api`, {
    headers: { ...apk(user.token), traceparent: `00-${TRACE}-${CALLER_SPAN}-01` },
    tls: { ca: gw.ca, servername: gw.fqdn },
  });
  expect(res.status, res.text).toBe(200);
  // nginx's span: a child of the caller's, exported by the sidecar from nginx's record.
  const spans = await receiver.waitFor((all) =>
    all.some((s) => s.traceId === TRACE && s.service === 'gateway'),
  );
  const gateway = spans.find((s) => s.traceId === TRACE && s.service === 'gateway')!;
  expect(gateway.parentSpanId).toBe(CALLER_SPAN);
  expect(gateway.attributes).toMatchObject({
    'http.request.method': 'GET',
    'url.path': '/api',
    'http.response.status_code': 200,
    'enduser.id': expect.any(String),
  });
  // The engine received the gateway's span as its parent and logged the trace.
  const engine = JSON.parse(
    await waitForLogLine(home, 'app.log', (l) => l.includes(TRACE) && l.includes('engine request')),
  );
  expect(engine).toMatchObject({ trace_id: TRACE, span_id: gateway.spanId, path: '/api' });
  // nginx's access log names the same span.
  expect(await waitForLogLine(home, 'nginx-access.log', (l) => l.includes(TRACE))).toContain(
    `trace_id=${TRACE} span_id=${gateway.spanId}`,
  );
  // Whatever the sidecar decided of it is the gateway span's child.
  for (const span of spans.filter((s) => s.traceId === TRACE && s.service !== 'gateway')) {
    expect(span.parentSpanId).toBe(gateway.spanId);
  }
  // The canary: the key's secret is in no exported span and no log.
  const secret = user.token.split('.')[1]!;
  expect(secret.length).toBeGreaterThan(20);
  expect(Buffer.concat(receiver.bodies).toString('latin1')).not.toContain(secret);
  const logs = (await readdir(join(home, 'logs'))).filter((name) => name.endsWith('.log'));
  expect(logs).toEqual(expect.arrayContaining(['app.log', 'sidecar.log', 'nginx-access.log']));
  for (const name of logs) {
    const text = await readFile(join(home, 'logs', name), 'utf8');
    expect(text.includes(secret), `${name} holds the key`).toBe(false);
  }
});

test("the key table's load, and the change a new client made, are the sidecar's own traces", async () => {
  const spans = await receiver.waitFor(
    (all) =>
      all.some((s) => s.name === 'key table load') &&
      all.some((s) => s.name === 'key table change'),
  );
  for (const name of ['key table load', 'key table change']) {
    const span = spans.find((s) => s.name === name)!;
    expect(span.service).toBe('gateway-sidecar');
    expect(span.parentSpanId).toBe('');
  }
});
