import { connect } from 'node:http2';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { allow, type GatewayUnderTest, startGateway } from './support/gateway-harness.js';

// The real nginx and Lua code against a stub sidecar that answers one question slowly: the
// worker's shared connection (lua/gateway/sidecar/mux.lua) numbers its questions, and an answer
// decided sooner reaches its request sooner, not after the slow one asked before it.

let gw: GatewayUnderTest;

beforeAll(async () => {
  gw = await startGateway();
});
afterAll(async () => {
  await gw?.stop();
});

/** GET over one HTTP/2 session (so one nginx worker): status and client id seen by the app. */
function get(session: ReturnType<typeof connect>, path: string) {
  return new Promise<{ path: string; status: number; body: string }>((resolve, reject) => {
    const stream = session.request({
      ':path': path,
      ':authority': 'localhost',
      authorization: `Bearer token-for${path}`,
    });
    let status = 0;
    let body = '';
    stream.on('response', (headers) => {
      status = Number(headers[':status']);
    });
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      body += chunk;
    });
    stream.on('end', () => resolve({ path, status, body }));
    stream.on('error', reject);
  });
}

describe("one worker's questions on its shared connection", () => {
  test('an answer decided sooner is not held behind a slow one asked before it', async () => {
    const slow = allow({ 'X-Client-Id': 'slow' });
    const fast = allow({ 'X-Client-Id': 'fast' });
    gw.stubSidecar.handler = (seen, res) => {
      const uri = String(seen.headers['x-original-uri']);
      if (uri === '/slow') setTimeout(() => slow(seen, res), 1_500);
      else fast(seen, res);
    };
    const session = connect(`https://127.0.0.1:${gw.httpsPort}`, {
      ca: gw.ca,
      servername: 'localhost',
    });
    try {
      const finished: string[] = [];
      const track = (path: string) =>
        get(session, path).then((answer) => {
          finished.push(answer.path);
          return answer;
        });
      const slowAnswer = track('/slow');
      // The slow question is on its way before the fast ones are asked.
      await new Promise((r) => setTimeout(r, 200));
      const fastAnswers = await Promise.all(
        Array.from({ length: 5 }, (_, i) => track(`/fast-${i}`)),
      );
      await slowAnswer;
      expect(fastAnswers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
      expect((await slowAnswer).status).toBe(200);
      // Each request got its own decision: the app saw the identity its question was answered.
      const seenBy = new Map(
        gw.stubApp.requests.map((r) => [r.url, String(r.headers['x-client-id'])]),
      );
      expect(seenBy.get('/slow')).toBe('slow');
      for (let i = 0; i < 5; i += 1) expect(seenBy.get(`/fast-${i}`)).toBe('fast');
      // In order of decision, not of asking.
      expect(finished.at(-1)).toBe('/slow');
    } finally {
      session.close();
    }
  }, 30_000);
});
