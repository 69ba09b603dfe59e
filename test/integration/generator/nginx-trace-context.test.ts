import { createSocket, type Socket } from 'node:dgram';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { parseNginxSpanBatch } from '../../../sidecar/tracing/nginx-span-record.js';
import { http } from '../../support/http.js';
import { controlRequest } from '../../support/nginx-control.js';
import { type GatewayUnderTest, startGateway } from './support/gateway-harness.js';

// settings' tracing through the real nginx (docs/decisions/20261202-trace-context.md): a trusted
// peer's traceparent (request_id.trusted_proxies; here 127.0.0.1, as a balancer would be) is
// continued, anyone else's replaced, a missing one started; the app and the sidecar get the
// gateway's own span as their parent, and the access log names both ids. Loopback takes any
// 127.x source address, so 127.0.0.2 is an untrusted caller.
const TRACE = '0af7651916cd43dd8448eb211c80319c';
const PARENT = 'b7ad6b7169203331';
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-(0[01])$/;

let n = 0;

/** A GET with a fresh credential from `from` carrying these headers: what the app and sidecar saw. */
async function get(gw: GatewayUnderTest, from: string, headers: Record<string, string>) {
  gw.reset();
  const res = await http(`https://localhost:${gw.httpsPort}/data`, {
    headers: { Authorization: `apk ${++n}.${'k'.repeat(43)}`, ...headers },
    tls: { ca: gw.ca, servername: 'localhost', localAddress: from },
    connectTo: '127.0.0.1',
  });
  expect(res.status).toBe(200);
  const [app] = gw.stubApp.requests;
  const [auth] = gw.authCalls();
  return {
    requestId: res.headers['x-request-id'] as string,
    app: app!.headers,
    auth: auth!.headers,
  };
}

/** The traceparent's parts, failing unless it is well formed. */
function parts(traceparent: unknown) {
  const match = TRACEPARENT.exec(String(traceparent));
  expect(match, `traceparent ${String(traceparent)}`).not.toBeNull();
  const [, traceId, parentId, flags] = match!;
  return { traceId: traceId!, parentId: parentId!, flags: flags! };
}

/** The access log's line for a request id, once nginx has written it. */
async function logLine(gw: GatewayUnderTest, requestId: string): Promise<string> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const line = (await gw.nginx.accessLog()).split('\n').find((l) => l.includes(requestId));
    if (line) return line;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`no access log line for ${requestId}`);
}

describe('tracing on, sampling every new trace', () => {
  let gw: GatewayUnderTest;
  beforeAll(async () => {
    gw = await startGateway({
      accessLog: true,
      settings: {
        request_id: { trusted_proxies: ['127.0.0.1/32'] },
        tracing: { enabled: true, sample_ratio: 1 },
      },
    });
  });
  afterAll(() => gw?.stop());

  test.each([
    ['sampled', '01'],
    ['unsampled', '00'],
  ])("a trusted peer's %s traceparent is continued with its tracestate", async (_, flags) => {
    const seen = await get(gw, '127.0.0.1', {
      traceparent: `00-${TRACE}-${PARENT}-${flags}`,
      tracestate: 'vendor=abc,other=1',
    });
    const app = parts(seen.app.traceparent);
    expect(app.traceId).toBe(TRACE);
    expect(app.flags).toBe(flags);
    // The app's parent is the gateway's span, not the caller's.
    expect(app.parentId).not.toBe(PARENT);
    expect(seen.app.tracestate).toBe('vendor=abc,other=1');
    // The sidecar's question names the same span as its parent.
    expect(seen.auth.traceparent).toBe(seen.app.traceparent);
    expect(await logLine(gw, seen.requestId)).toMatch(
      new RegExp(` ${seen.requestId} trace_id=${TRACE} span_id=${app.parentId}$`),
    );
  });

  test('a request without a traceparent starts a sampled trace', async () => {
    const seen = await get(gw, '127.0.0.1', {});
    const app = parts(seen.app.traceparent);
    expect(app.flags).toBe('01');
    expect(seen.app.tracestate).toBeUndefined();
    expect(seen.auth.traceparent).toBe(seen.app.traceparent);
    expect(await logLine(gw, seen.requestId)).toMatch(
      new RegExp(` trace_id=${app.traceId} span_id=${app.parentId}$`),
    );
  });

  test('two new traces differ in trace id and span id', async () => {
    const one = parts((await get(gw, '127.0.0.1', {})).app.traceparent);
    const two = parts((await get(gw, '127.0.0.1', {})).app.traceparent);
    expect(one.traceId).not.toBe(two.traceId);
    expect(one.parentId).not.toBe(two.parentId);
  });

  test("another peer's traceparent and tracestate are replaced, even naming a trusted one in X-Forwarded-For", async () => {
    const seen = await get(gw, '127.0.0.2', {
      traceparent: `00-${TRACE}-${PARENT}-01`,
      tracestate: 'vendor=abc',
      'X-Forwarded-For': '127.0.0.1',
    });
    const app = parts(seen.app.traceparent);
    expect(app.traceId).not.toBe(TRACE);
    expect(app.parentId).not.toBe(PARENT);
    expect(seen.app.tracestate).toBeUndefined();
  });

  test.each([
    ['an all-zero trace id', `00-${'0'.repeat(32)}-${PARENT}-01`],
    ['an all-zero parent id', `00-${TRACE}-${'0'.repeat(16)}-01`],
    ['upper-case hex', `00-${TRACE.toUpperCase()}-${PARENT}-01`],
    ['version ff', `ff-${TRACE}-${PARENT}-01`],
    ['a short trace id', `00-${TRACE.slice(1)}-${PARENT}-01`],
    ['trailing text', `00-${TRACE}-${PARENT}-01-x`],
  ])('a trusted peer’s traceparent with %s is replaced', async (_, sent) => {
    const seen = await get(gw, '127.0.0.1', { traceparent: sent, tracestate: 'vendor=abc' });
    const app = parts(seen.app.traceparent);
    expect(app.traceId).not.toBe(TRACE);
    expect(seen.app.tracestate).toBeUndefined();
  });

  test('X-Request-Id is untouched by the trace: a trusted id is still kept, separately', async () => {
    const seen = await get(gw, '127.0.0.1', {
      'X-Request-Id': 'lb-7',
      traceparent: `00-${TRACE}-${PARENT}-01`,
    });
    expect(seen.requestId).toBe('lb-7');
    expect(seen.app['x-request-id']).toBe('lb-7');
    expect(parts(seen.app.traceparent).traceId).toBe(TRACE);
  });
});

describe('tracing on, sampling no new trace', () => {
  let gw: GatewayUnderTest;
  beforeAll(async () => {
    gw = await startGateway({
      settings: {
        request_id: { trusted_proxies: ['127.0.0.1/32'] },
        tracing: { enabled: true, sample_ratio: 0 },
      },
    });
  });
  afterAll(() => gw?.stop());

  test('a new trace is unsampled', async () => {
    expect(parts((await get(gw, '127.0.0.1', {})).app.traceparent).flags).toBe('00');
  });

  test("a trusted caller's sampled trace stays sampled (parent-based)", async () => {
    const seen = await get(gw, '127.0.0.1', { traceparent: `00-${TRACE}-${PARENT}-01` });
    expect(parts(seen.app.traceparent)).toMatchObject({ traceId: TRACE, flags: '01' });
  });
});

describe('tracing off (the default)', () => {
  let gw: GatewayUnderTest;
  beforeAll(async () => {
    gw = await startGateway({
      accessLog: true,
      settings: { request_id: { trusted_proxies: ['127.0.0.1/32'] } },
    });
  });
  afterAll(() => gw?.stop());

  test('a caller’s traceparent reaches the app as it was, and the sidecar gets none', async () => {
    const sent = `00-${TRACE}-${PARENT}-01`;
    const seen = await get(gw, '127.0.0.2', { traceparent: sent, tracestate: 'vendor=abc' });
    expect(seen.app.traceparent).toBe(sent);
    expect(seen.app.tracestate).toBe('vendor=abc');
    expect(seen.auth.traceparent).toBeUndefined();
  });

  test('the access log line ends with the request id, as before', async () => {
    const seen = await get(gw, '127.0.0.1', {});
    expect(await logLine(gw, seen.requestId)).toMatch(new RegExp(`" ${seen.requestId}$`));
  });
});

describe("nginx's own span records (an otlp_endpoint set)", () => {
  let gw: GatewayUnderTest;
  let socket: Socket;
  const datagrams: Buffer[] = [];
  beforeAll(async () => {
    socket = createSocket('udp4');
    socket.on('message', (m) => datagrams.push(m));
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
    gw = await startGateway({
      // The harness's access log is off: the records are the module's, not an access log's.
      settings: {
        request_id: { trusted_proxies: ['127.0.0.1/32'] },
        tracing: {
          enabled: true,
          sample_ratio: 1,
          otlp_endpoint: 'http://127.0.0.1:1/v1/traces',
          nginx_spans_to: `127.0.0.1:${socket.address().port}`,
        },
      },
    });
  });
  afterAll(async () => {
    await gw?.stop();
    socket?.close();
  });

  /** The records received for a trace id, read as the sidecar reads them. */
  async function recordsOf(traceId: string, atLeast: number) {
    for (let attempt = 0; attempt < 100; attempt++) {
      const records = datagrams
        .flatMap((d) => parseNginxSpanBatch(d).records)
        .filter((r) => r.traceId === traceId);
      if (records.length >= atLeast) return records;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return [];
  }

  test('a sampled request sends one record: its trace, its span, the caller’s parent, the client', async () => {
    const trace = `${TRACE.slice(0, -4)}0001`;
    const seen = await get(gw, '127.0.0.1', {
      traceparent: `00-${trace}-${PARENT}-01`,
    });
    const [record, extra] = await recordsOf(trace, 1);
    expect(extra).toBeUndefined();
    expect(record).toMatchObject({
      traceId: trace,
      spanId: parts(seen.app.traceparent).parentId,
      parentId: PARENT,
      method: 'GET',
      path: '/data',
      status: 200,
      clientId: '1',
      authMethod: 'apk',
    });
    expect(record!.endMs).toBeGreaterThanOrEqual(record!.startMs);
    expect(Math.abs(record!.endMs - Date.now())).toBeLessThan(60_000);
  });

  test('an unsampled request sends none', async () => {
    const unsampled = `${TRACE.slice(0, -4)}0002`;
    await get(gw, '127.0.0.1', { traceparent: `00-${unsampled}-${PARENT}-00` });
    // A sampled one after it: once its record is in, the unsampled one's would be too.
    const sampled = `${TRACE.slice(0, -4)}0003`;
    await get(gw, '127.0.0.1', { traceparent: `00-${sampled}-${PARENT}-01` });
    expect(await recordsOf(sampled, 1)).toHaveLength(1);
    expect(await recordsOf(unsampled, 0)).toEqual([]);
  });

  test('no record carries the credential', async () => {
    const trace = `${TRACE.slice(0, -4)}0004`;
    const secret = 'canary'.repeat(7).slice(0, 43);
    await http(`https://localhost:${gw.httpsPort}/data?key=${secret}`, {
      headers: { Authorization: `apk 77.${secret}`, traceparent: `00-${trace}-${PARENT}-01` },
      tls: { ca: gw.ca, servername: 'localhost', localAddress: '127.0.0.1' },
      connectTo: '127.0.0.1',
    });
    expect(await recordsOf(trace, 1)).toHaveLength(1);
    expect(Buffer.concat(datagrams).toString('latin1')).not.toContain(secret);
  });

  test("the control server's requests (the sidecar's to nginx, nginx's to the sidecar) record no span: only callers' do", async () => {
    const trace = `${TRACE.slice(0, -4)}0006`;
    // What the sidecar asks nginx, and a miss, which the Lua access code asks the sidecar about.
    expect((await controlRequest(gw, '/metrics')).status).toBe(200);
    await get(gw, '127.0.0.1', { traceparent: `00-${trace}-${PARENT}-01` });
    expect(await recordsOf(trace, 1)).toHaveLength(1);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const paths = datagrams.flatMap((d) => parseNginxSpanBatch(d).records.map((r) => r.path));
    expect(paths.length).toBeGreaterThan(0);
    expect(paths.filter((path) => !path.startsWith('/data'))).toEqual([]);
  });

  test('a path with a space and a client id that needs encoding arrive whole', async () => {
    const trace = `${TRACE.slice(0, -4)}0005`;
    await http(`https://localhost:${gw.httpsPort}/data/a%20b?x=1`, {
      headers: {
        Authorization: `apk ${++n}.${'k'.repeat(43)}`,
        traceparent: `00-${trace}-${PARENT}-01`,
      },
      tls: { ca: gw.ca, servername: 'localhost', localAddress: '127.0.0.1' },
      connectTo: '127.0.0.1',
    });
    const [record] = await recordsOf(trace, 1);
    expect(record?.path).toBe('/data/a b');
  });

  test("concurrent requests' records arrive batched, every one of them, none unreadable", async () => {
    const before = datagrams.length;
    const traces = Array.from(
      { length: 40 },
      (_, i) => `${TRACE.slice(0, -4)}1${String(i).padStart(3, '0')}`,
    );
    await Promise.all(
      traces.map((trace) =>
        http(`https://localhost:${gw.httpsPort}/data`, {
          headers: {
            Authorization: `apk 1.${'k'.repeat(43)}`,
            traceparent: `00-${trace}-${PARENT}-01`,
          },
          tls: { ca: gw.ca, servername: 'localhost', localAddress: '127.0.0.1' },
          connectTo: '127.0.0.1',
        }),
      ),
    );
    for (const trace of traces) expect(await recordsOf(trace, 1)).toHaveLength(1);
    const batches = datagrams.slice(before).map((d) => parseNginxSpanBatch(d));
    expect(batches.reduce((sum, b) => sum + b.unreadable, 0)).toBe(0);
    // 40 requests' records in fewer datagrams than requests: a worker sends a batch, not a record.
    expect(batches.length).toBeLessThan(traces.length);
  });
});
