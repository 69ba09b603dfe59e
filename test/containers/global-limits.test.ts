import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { engine, IMAGES } from '../support/container-engine.js';
import { addressesOf } from '../support/container-reach.js';
import { http } from '../support/http.js';
import { CLIENTS, uniqueName } from '../support/management.js';
import { startOfWindow } from '../support/rate-limited-clients.js';
import { PAIRS, type Pair, type ReplicasStack, startReplicas } from '../support/replicas-stack.js';
import { apk } from '../support/sidecar.js';

/**
 * docker-compose.replicas.yml with its redis service (profile global-limits, the image built
 * from Debian's redis-server by docker/build-airgapped-images.sh) and RATE_LIMITS_STORE=redis
 * on every sidecar: one client's limit is the fleet's, whichever pair a request reaches
 * (docs/decisions/20261202-global-rate-limits.md). The native three-pair run and Redis away are
 * test/e2e/global-rate-limits.test.ts's.
 */

let stack: ReplicasStack;
const SYNC_MS = 200;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
// Another pair's push, then this pair's pull (the bound's lag), with room for a loaded machine.
const settle = () => sleep(5 * SYNC_MS + 500);

beforeAll(async () => {
  stack = await startReplicas('global-limits', {
    globalLimits: { RATE_LIMITS_SYNC_MS: String(SYNC_MS) },
  });
}, 300_000);

afterAll(async () => {
  await stack?.down();
}, 180_000);

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await sleep(250);
  }
}

/** A pair's sidecar metrics, on the pair's `back` address (where the balancer reads /readyz). */
async function metricsOf(pair: Pair): Promise<string> {
  const docker = (await engine()).container.dockerode;
  const at = await addressesOf(docker, stack.project, pair);
  return (await http(`http://${at.back}:9464/metrics`, { timeoutMs: 5_000 })).text;
}

const call = (pair: Pair, token: string) => stack.viaPair(pair, '/api', { headers: apk(token) });
async function statuses(pair: Pair, token: string, n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i += 1) out.push((await call(pair, token)).status);
  return out;
}

describe('one rate limit across the pairs (profile global-limits)', () => {
  test('the redis service runs the image under test, on the back network only, published nowhere', async () => {
    const docker = (await engine()).container.dockerode;
    expect(Object.keys(await addressesOf(docker, stack.project, 'redis'))).toEqual(['back']);
    const inspect = await docker.getContainer(await stack.containerId('redis')).inspect();
    expect(inspect.Config.Image).toBe(IMAGES.redis);
    const published = Object.values(inspect.NetworkSettings.Ports ?? {}).filter(
      (bindings) => bindings && bindings.length > 0,
    );
    expect(published).toEqual([]);
    expect(await stack.compose(['exec', '-T', 'redis', 'redis-server', '--version'])).toMatch(
      / v=7\./,
    );
    for (const pair of PAIRS) {
      await until(`${pair} syncs with Redis`, async () =>
        /^gateway_rate_limit_store_up 1$/m.test(await metricsOf(pair).catch(() => '')),
      );
    }
  });

  test('what one pair admitted is spent on the others; the RateLimit header and Redis say the fleet’s count', async () => {
    const res = await stack.viaPair('pair-1', CLIENTS, {
      method: 'POST',
      headers: apk(stack.adminKey),
      json: {
        name: uniqueName('global'),
        is_admin: false,
        generate_api_key: true,
        rate_limit: { requests: 6, per_seconds: 60 },
      },
    });
    expect(res.status, res.text).toBe(201);
    const { api_key_id: id, token } = res.json as { api_key_id: number; token: string };
    await startOfWindow(60, 30_000);
    expect(await statuses('pair-1', token, 2)).toEqual([200, 200]);
    await settle();
    const first = await call('pair-2', token);
    expect(first.status).toBe(200);
    // The fleet's remaining: 6 − 2 on pair-1 − this one.
    expect(String(first.headers.ratelimit)).toMatch(/;r=3;/);
    expect(await statuses('pair-2', token, 1)).toEqual([200]);
    await settle();
    expect(await statuses('pair-3', token, 3)).toEqual([200, 200, 429]);
    await settle();
    for (const pair of PAIRS) expect(await statuses(pair, token, 1), pair).toEqual([429]);
    const refused = await stack.viaBalancer('/api', { headers: apk(token) });
    expect(refused.status).toBe(429);
    expect(refused.json).toEqual({ errors: [expect.objectContaining({ code: 'RATE_LIMITED' })] });
    const window = Math.floor(Date.now() / 60_000);
    const total = await stack.compose([
      'exec',
      '-T',
      'redis',
      'redis-cli',
      'get',
      `gw:rl:${id}:60:${window}`,
    ]);
    expect(total.trim()).toBe('6');
  });
});
