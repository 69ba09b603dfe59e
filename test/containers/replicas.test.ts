import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { engine } from '../support/container-engine.js';
import { addressesOf, reachFrom } from '../support/container-reach.js';
import { CLIENTS } from '../support/management.js';
import {
  ALLOWED_PREFIX,
  expectEngineSaw,
  expectH2Outcome,
  expectOutcome,
  H1_TRICKS,
  READ_SERVICE,
  rawRequest,
  reachedEngine,
  TRICKS,
} from '../support/permission-tricks.js';
import type { RawTarget } from '../support/raw-tls.js';
import { PAIRS, type Pair, type ReplicasStack, startReplicas } from '../support/replicas-stack.js';
import { apk } from '../support/sidecar.js';
import { failures, type LoadTally, steadyLoad } from '../support/steady-load.js';

/**
 * docker-compose.replicas.yml: three proxy + sidecar pairs on one PostgreSQL behind HAProxy,
 * with the images under test. Pairs are reached one by one at their own addresses to show
 * that they share the database and nothing else; the balancer with a steady load of callers
 * (test/support/steady-load.ts) to count what a restart, a kill or a database restart costs
 * them. The figures at scale are `npm run bench:replicas`'s.
 */

let stack: ReplicasStack;
// HAProxy's unique-id (docker/balancer/haproxy.cfg): a UUID.
const HAPROXY_ID = /^[0-9A-Fa-f]{8}-(?:[0-9A-Fa-f]{4}-){3}[0-9A-Fa-f]{12}$/;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  stack = await startReplicas('replicas', { appLogsRequests: true });
}, 300_000);

afterAll(async () => {
  await stack?.down();
}, 180_000);

async function newKey(via: Pair, name: string): Promise<{ id: number; token: string }> {
  const res = await stack.viaPair(via, CLIENTS, {
    method: 'POST',
    headers: apk(stack.adminKey),
    json: { name, is_admin: false, generate_api_key: true },
  });
  expect(res.status, res.text).toBe(201);
  const body = res.json as { api_key_id: number; token: string };
  return { id: body.api_key_id, token: body.token };
}

function load(concurrency = 4) {
  return steadyLoad({
    url: `https://localhost:${stack.port}/api`,
    headers: apk(stack.adminKey),
    ca: stack.ca,
    servername: 'localhost',
    concurrency,
  });
}

function describeTally(t: LoadTally): string {
  return `${t.requests} requests, ${JSON.stringify(t.byStatus)}, errors ${JSON.stringify(t.errors)}, slowest ${t.slowestMs.toFixed(0)} ms`;
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await sleep(250);
  }
}

describe('segmented (docs/security.md)', () => {
  test('the app reaches no database, no balancer, and no sidecar port of any pair; the balancer reaches every pair', async () => {
    const docker = (await engine()).container.dockerode;
    const database = await addressesOf(docker, stack.project, 'database');
    const balancer = await addressesOf(docker, stack.project, 'balancer');
    expect(Object.keys(database)).toEqual(['back']);
    expect(Object.keys(balancer)).toEqual(['back']);
    expect(Object.keys(await addressesOf(docker, stack.project, 'app'))).toEqual(['front']);
    const targets: Array<readonly [string, number]> = [
      ['database', 5432],
      [database.back!, 5432],
      ['balancer', 443],
      [balancer.back!, 443],
    ];
    for (const pair of PAIRS) {
      const at = await addressesOf(docker, stack.project, pair);
      expect(Object.keys(at).sort()).toEqual(['back', 'front']);
      // By name the app finds the pair's `front` address; the sidecar and its metrics are
      // on neither address it could try.
      for (const host of [pair, at.front!, at.back!]) targets.push([host, 8081], [host, 9464]);
    }
    const fromApp = await reachFrom((c) => stack.compose(['exec', '-T', 'app', ...c]), targets);
    console.info(`replicas: from the app container: ${JSON.stringify(fromApp)}`);
    for (const [target, outcome] of Object.entries(fromApp))
      expect(outcome, target).not.toBe('open');
    // nginx in each pair does reach the app (a 200 through each), and the balancer each pair's
    // /readyz on its `back` address.
    for (const pair of PAIRS)
      expect((await stack.viaPair(pair, '/api', { headers: apk(stack.adminKey) })).status).toBe(
        200,
      );
    expect(await Promise.all(PAIRS.map((p) => stack.pairStatus(p)))).toEqual(['UP', 'UP', 'UP']);
  });

  test("a pair whose resolver lists the app network's DNS server first is put right by its holder (podman's CNI order)", async () => {
    // docker/pair-holder.sh: the order of a namespace's name servers is the engine's; the
    // sidecar needs the one that knows `database` first. Swapped here as podman may write it.
    const resolv = await stack.compose(['exec', '-T', 'pair-1', 'cat', '/etc/resolv.conf']);
    const servers = [...resolv.matchAll(/^nameserver\s+(\S+)/gm)].map((m) => m[1]!);
    if (servers.length > 1) {
      const swapped = resolv
        .replace(`nameserver ${servers[0]}\n`, 'nameserver FIRST\n')
        .replace(`nameserver ${servers[1]}\n`, `nameserver ${servers[0]}\n`)
        .replace('nameserver FIRST\n', `nameserver ${servers[1]}\n`);
      await stack.compose([
        'exec',
        '-T',
        'pair-1',
        'bash',
        '-c',
        `printf '%s' '${swapped}' >/etc/resolv.conf`,
      ]);
    }
    await until(
      'the sidecar of pair-1 resolves database again',
      async () =>
        await stack.compose(['exec', '-T', 'gateway-1', 'getent', 'ahostsv4', 'database']).then(
          () => true,
          () => false,
        ),
      15_000,
    );
    const now = await stack.compose(['exec', '-T', 'pair-1', 'cat', '/etc/resolv.conf']);
    console.info(
      `replicas: pair-1 name servers ${JSON.stringify(servers)}, now ${JSON.stringify([...now.matchAll(/^nameserver\s+(\S+)/gm)].map((m) => m[1]))}`,
    );
    // With one server per network, the swap hid `database` until the holder moved it back.
    if (servers.length > 1)
      expect(await stack.compose(['logs', '--no-color', 'pair-1'])).toMatch(
        /pair-holder: database is known to DNS server \S+ only/,
      );
    // Every other line where it was.
    expect(now.replace(/^nameserver.*\n/gm, '')).toBe(resolv.replace(/^nameserver.*\n/gm, ''));
    expect((await stack.viaPair('pair-1', '/api', { headers: apk(stack.adminKey) })).status).toBe(
      200,
    );
  });

  test('no default database password: generated, random, in no rendered file or environment', async () => {
    const password = (
      await stack.compose([
        'exec',
        '-T',
        'gateway-1',
        'cat',
        '/run/gateway-secrets/postgres-password',
      ])
    ).trim();
    expect(password).toMatch(/^[0-9a-f]{48}$/);
    const rendered = await stack.compose(['config']);
    expect(rendered).not.toContain(password);
    expect(rendered).not.toMatch(/POSTGRES_PASSWORD: ['"]?gateway|:gateway@/);
    for (const service of ['gateway-1', 'database'])
      expect(await stack.compose(['exec', '-T', service, 'env']), service).not.toContain(password);
  });
});

describe('three pairs on one database', () => {
  test('a key created through pair 1 works through pairs 2 and 3 at once', async () => {
    const { token } = await newKey('pair-1', 'made-on-pair-1');
    const answers = await Promise.all(
      (['pair-2', 'pair-3'] as const).map((pair) =>
        stack.viaPair(pair, '/api', { headers: apk(token) }),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual([200, 200]);
    expect((await stack.viaBalancer('/api', { headers: apk(token) })).status).toBe(200);
  });

  test('a delete through pair 3 is refused by pairs 1 and 2 on their next request (pushed, not aged out)', async () => {
    const { id, token } = await newKey('pair-1', 'deleted-on-pair-3');
    // Both hold the key's record: a "yes" they would reuse for 30 s without a push.
    for (const pair of ['pair-1', 'pair-2'] as const)
      expect((await stack.viaPair(pair, '/api', { headers: apk(token) })).status).toBe(200);
    const removed = await stack.viaPair('pair-3', `${CLIENTS}/${id}`, {
      method: 'DELETE',
      headers: apk(stack.adminKey),
    });
    expect(removed.status).toBe(200);
    const answeredAt = Date.now();
    // NOTIFY reaches the other sidecars in milliseconds; the bound here is far below nginx's
    // 30 s window, so a refusal proves the push.
    for (const pair of ['pair-1', 'pair-2'] as const) {
      await until(
        `${pair} refuses the deleted key`,
        async () => (await stack.viaPair(pair, '/api', { headers: apk(token) })).status === 401,
        2_000,
      );
      expect((await stack.viaPair(pair, '/api', { headers: apk(token) })).status).toBe(401);
    }
    console.info(
      `replicas: delete on pair 3 refused by pairs 1 and 2 after ${Date.now() - answeredAt} ms`,
    );
  });

  test('a permissions change through pair 3 applies on pairs 1 and 2 on their next request; null restores everything', async () => {
    const { id, token } = await newKey('pair-1', 'restricted-on-pair-3');
    const put = (permissions: unknown) =>
      stack.viaPair('pair-3', `${CLIENTS}/${id}`, {
        method: 'PUT',
        headers: apk(stack.adminKey),
        json: { permissions },
      });
    const status = async (pair: Pair) =>
      (await stack.viaPair(pair, '/api', { headers: apk(token) })).status;
    for (const pair of ['pair-1', 'pair-2'] as const) expect(await status(pair)).toBe(200);
    // A rule set without /api: refused by the others as soon as the notice reaches them.
    expect((await put([{ methods: ['GET'], path: '/resources/json/service/**' }])).status).toBe(
      200,
    );
    for (const pair of ['pair-1', 'pair-2'] as const) {
      await until(`${pair} applies the rules`, async () => (await status(pair)) === 403, 2_000);
      const refused = await stack.viaPair(pair, '/api', { headers: apk(token) });
      expect((refused.json as { errors: { code: string }[] }).errors[0]?.code).toBe(
        'PERMISSION_DENIED',
      );
    }
    // Adding the rule back, then null: both pass again.
    expect((await put([{ methods: ['GET'], path: '/api' }])).status).toBe(200);
    for (const pair of ['pair-1', 'pair-2'] as const)
      await until(
        `${pair} applies the added rule`,
        async () => (await status(pair)) === 200,
        2_000,
      );
    expect((await put(null)).status).toBe(200);
    for (const pair of ['pair-1', 'pair-2'] as const)
      await until(
        `${pair} lets everything through again`,
        async () => (await status(pair)) === 200,
        2_000,
      );
  });

  describe("a restricted client's tricks, straight to one pair's nginx (the proxy image)", () => {
    let token = '';
    let target: RawTarget;
    beforeAll(async () => {
      const res = await stack.viaPair('pair-1', CLIENTS, {
        method: 'POST',
        headers: apk(stack.adminKey),
        json: {
          name: 'tricks',
          is_admin: false,
          generate_api_key: true,
          permissions: READ_SERVICE,
        },
      });
      expect(res.status, res.text).toBe(201);
      token = (res.json as { token: string }).token;
      target = { host: stack.address('pair-1'), port: 443, ca: stack.ca, servername: 'localhost' };
    });
    /** What the app saw of `ids`, once it has logged an allowed request sent after them. */
    const engineSaw = (ids: string[]) =>
      reachedEngine(
        ids,
        async () => {
          const marker = await rawRequest(target, 'localhost', token, `${ALLOWED_PREFIX}/about`);
          expectOutcome('allowed', marker.status, marker.body);
          return marker.id;
        },
        () => stack.compose(['logs', '--no-color', 'app']),
      );

    test.each([...TRICKS, ...H1_TRICKS])('HTTP/1.1: %s → %s', async (_, requestTarget, outcome) => {
      const res = await rawRequest(target, 'localhost', token, requestTarget);
      expectOutcome(outcome, res.status, res.body);
      expectEngineSaw(await engineSaw([res.id]), outcome);
    });

    test.each(TRICKS)('HTTP/2: %s → %s', async (_, path, outcome) => {
      await expectH2Outcome(target, 'localhost', token, path, outcome);
    });
  });

  test('the README curl examples work through the balancer, which names every request', async () => {
    const created = await stack.viaBalancer(CLIENTS, {
      method: 'POST',
      headers: apk(stack.adminKey),
      json: { name: 'billing', is_admin: false, generate_api_key: true },
    });
    expect(created.status).toBe(201);
    const list = await stack.viaBalancer(`${CLIENTS}/`, { headers: apk(stack.adminKey) });
    expect(list.status).toBe(200);
    const anonymous = await stack.viaBalancer('/api');
    expect(anonymous.status).toBe(401);
    expect(anonymous.json).toEqual({
      errors: [expect.objectContaining({ code: expect.any(String) })],
    });
    // HAProxy's id (a UUID), not a pair's own (32 hex digits): the pairs trust the balancer.
    expect(anonymous.headers['x-request-id']).toMatch(HAPROXY_ID);
  });

  test("the balancer's request id is kept by the pair: answered, and in nginx's and the app's logs", async () => {
    const res = await stack.viaBalancer('/api', {
      headers: { ...apk(stack.adminKey), 'X-Request-Id': 'chosen-by-the-caller' },
    });
    expect(res.status).toBe(200);
    const id = String(res.headers['x-request-id']);
    // The balancer replaced the caller's own id; the pair kept the balancer's.
    expect(id).toMatch(HAPROXY_ID);
    const logs = (service: string) => stack.compose(['logs', '--no-color', service]);
    await until(
      'the app logs the request with the id',
      async () => (await logs('app')).includes(`"request_id":"${id}"`),
      10_000,
    );
    const proxies = await Promise.all(PAIRS.map((_, i) => logs(`proxy-${i + 1}`)));
    expect(proxies.filter((text) => text.includes(` ${id}`))).toHaveLength(1);
  });
});

describe('replicas coming and going under a steady load', () => {
  test('a rolling restart of every pair fails no request', async () => {
    const before = await Promise.all(PAIRS.map((_, i) => stack.containerId(`proxy-${i + 1}`)));
    const callers = load();
    await sleep(1_000);
    const t0 = performance.now();
    await new Promise<void>((resolve, reject) => {
      execFile(
        'bash',
        ['docker/rolling-restart.sh'],
        {
          cwd: join(import.meta.dirname, '../..'),
          env: { ...stack.env, COMPOSE: stack.composeCommand },
          timeout: 400_000,
        },
        (err, _out, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve()),
      );
    });
    const restartMs = performance.now() - t0;
    await sleep(1_000);
    const tally = await callers.stop();
    console.info(
      `replicas: rolling restart of 3 pairs in ${(restartMs / 1000).toFixed(1)} s under load: ${describeTally(tally)}`,
    );
    expect(tally.requests).toBeGreaterThan(200);
    expect(failures(tally), describeTally(tally)).toBe(0);
    // Every pair is new and back in service.
    const after = await Promise.all(PAIRS.map((_, i) => stack.containerId(`proxy-${i + 1}`)));
    for (let i = 0; i < PAIRS.length; i++) expect(after[i]).not.toBe(before[i]);
    expect(await Promise.all(PAIRS.map((p) => stack.pairStatus(p)))).toEqual(['UP', 'UP', 'UP']);
  }, 420_000);

  test('a pair killed outright is taken out; its callers are retried or answered 503 JSON, never hung', async () => {
    const callers = load();
    await sleep(1_000);
    await stack.compose(['kill', '-s', 'SIGKILL', 'proxy-2', 'gateway-2']);
    await until(
      'the balancer takes pair-2 out',
      async () => (await stack.pairStatus('pair-2')) !== 'UP',
      15_000,
    );
    await sleep(2_000);
    const tally = await callers.stop();
    console.info(`replicas: pair 2 killed under load: ${describeTally(tally)}`);
    // Every request was answered (no hang, no reset reached a caller), as 200 or in the one
    // JSON error shape.
    expect(tally.errors).toEqual({});
    expect(tally.notJson).toBe(0);
    for (const status of Object.keys(tally.byStatus).map(Number))
      expect([200, 502, 503]).toContain(status);
    // The rest serve: the next requests all pass.
    for (let i = 0; i < 6; i++)
      expect((await stack.viaBalancer('/api', { headers: apk(stack.adminKey) })).status).toBe(200);
    await stack.compose(['up', '-d', '--no-deps', 'gateway-2', 'proxy-2']);
    await until(
      'pair-2 back in service',
      async () => (await stack.pairStatus('pair-2')) === 'UP',
      120_000,
    );
  }, 240_000);

  test("PostgreSQL restarted mid-load: known callers and a key created just before keep passing (nginx's key table), management gets 503 JSON, all recovers by itself", async () => {
    const { token: fresh } = await newKey('pair-1', 'first-used-during-the-outage');
    const callers = load();
    await sleep(1_000);
    await stack.compose(['stop', '-t', '10', 'database']);
    // Down: every pair decides the keys its key table holds, a key made a moment before included
    // (docs/decisions/20261127-key-table-replica.md); management needs the database.
    expect((await stack.viaBalancer('/api', { headers: apk(fresh) })).status).toBe(200);
    const management = await stack.viaBalancer(`${CLIENTS}?limit=1`, {
      headers: apk(stack.adminKey),
    });
    expect(management.status).toBe(503);
    expect(management.json).toEqual({
      errors: [expect.objectContaining({ code: expect.any(String) })],
    });
    // The pairs stay in service: the database is everyone's, taking them out would refuse all.
    expect(await Promise.all(PAIRS.map((p) => stack.pairStatus(p)))).toEqual(['UP', 'UP', 'UP']);
    await sleep(2_000);
    await stack.compose(['start', 'database']);
    await until(
      'management answers once PostgreSQL is back',
      async () =>
        (await stack.viaBalancer(`${CLIENTS}?limit=1`, { headers: apk(stack.adminKey) })).status ===
        200,
      90_000,
    );
    expect((await stack.viaBalancer('/api', { headers: apk(fresh) })).status).toBe(200);
    const tally = await callers.stop();
    console.info(`replicas: PostgreSQL restarted under load: ${describeTally(tally)}`);
    expect(tally.errors).toEqual({});
    expect(tally.notJson).toBe(0);
    expect(failures(tally), describeTally(tally)).toBe(0);
    // Management works again on every pair, none restarted.
    for (const pair of PAIRS)
      expect(
        (await stack.viaPair(pair, `${CLIENTS}?limit=1`, { headers: apk(stack.adminKey) })).status,
      ).toBe(200);
  }, 240_000);
});
