import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { http } from '../../test/support/http.js';
import type { Cleanup } from '../cleanup.js';
import type { ProcessRoots } from '../cpu-split.js';
import { type Baseline, startBaseline } from './baseline.js';
import { BENCH_PATH, engineSessionCookie } from './engine-session.js';
import { checkFast, type FastStack, startFastParts, startFastUpstream } from './fast-stack.js';
import { type BenchGateway, startGateway } from './gateway.js';
import { BEARER_CLIENT, type BenchOidc, startOidc } from './oidc.js';
import { type SharedDatabase, startSharedDatabase } from './postgres.js';

export const CLIENTS_PATH = '/v1/management/api-clients';

/** Everything the rows run against, and the credentials they present. */
export interface BenchStack {
  dir: string;
  db: SharedDatabase;
  oidc: BenchOidc;
  /** Gateway A: every load row, the management row and the memory row. */
  a: BenchGateway;
  /**
   * Gateway B: the second proxy+sidecar pair on the same database (revocation), whose app is
   * the static responder (the fast-upstream rows).
   */
  b: BenchGateway;
  baseline: Baseline;
  /** The fast-upstream rows' parts: static responder, B's baseline, B with its cache off. */
  fast: FastStack;
  /** Engine session cookie of A's engine (the baseline shares A's engine). */
  cookieA: string;
  /** A non-admin client's key, as an ordinary API caller has. */
  apiKey: string;
  bearerToken: string;
  roots(wrkPid?: number): ProcessRoots;
}

/**
 * Starts, in order: one PostgreSQL, the OpenID Connect provider, gateways A and B on that
 * database (together: migrations are serialised by the sidecar), then the baseline nginx
 * derived from A's configuration. Each part is registered with `cleanup` as soon as it runs.
 */
export async function startStack(
  dir: string,
  cleanup: Cleanup,
  say: (line: string) => void,
): Promise<BenchStack> {
  const db = await startSharedDatabase(join(dir, 'pg'));
  cleanup.add('PostgreSQL', db.stop);
  const oidc = await startOidc(dir);
  cleanup.add('OpenID Connect provider', () => oidc.provider.stop());
  const engineAdminPassword = randomBytes(12).toString('base64url');
  const common = { databaseUrl: db.url, env: oidc.gatewayEnv, engineAdminPassword };
  const fastUpstream = await startFastUpstream(dir, join(dir, 'b'), oidc.gatewayEnv, cleanup);
  const started = await Promise.allSettled([
    startGateway({ ...common, name: 'A', home: join(dir, 'a'), createKey: true }),
    startGateway({
      ...common,
      // The static responder is B's application: without this the runner points default.conf
      // back at its bundled engine (native/gateway.ts, repairDefaultConf) and starts it.
      env: { ...common.env, GATEWAY_APP_UPSTREAM: fastUpstream.responder.upstream },
      name: 'B',
      home: join(dir, 'b'),
      createKey: false,
      port: fastUpstream.port,
    }),
  ]);
  for (const s of started)
    if (s.status === 'fulfilled') cleanup.add(`gateway ${s.value.name}`, s.value.stop);
  const [a, b] = started.map((s) => {
    if (s.status === 'rejected') throw s.reason;
    return s.value;
  }) as [BenchGateway, BenchGateway];
  say(`gateways: A ${a.url}, B ${b.url} (one PostgreSQL)`);
  const baseline = await startBaseline(join(dir, 'baseline'), a.configDir);
  cleanup.add('baseline nginx', baseline.stop);
  say(`baseline (A's default.conf, auth off): ${baseline.url}`);
  for (const change of baseline.changes) say(`  ${change}`);
  const fast = await startFastParts(dir, fastUpstream.responder, b, cleanup, say);

  const cookieA = await engineSessionCookie(a.appSocket, engineAdminPassword);
  const create = async (body: Record<string, unknown>) => {
    const res = await http(`${a.url}${CLIENTS_PATH}`, {
      method: 'POST',
      headers: { Host: 'localhost', Authorization: `apk ${a.adminKey}` },
      json: body,
      tls: { ca: a.ca, servername: 'localhost' },
    });
    if (res.status !== 201) throw new Error(`creating a client: ${res.status} ${res.text}`);
    return res.json as { api_key_id: number; token?: string };
  };
  const apiKey = (await create({ name: 'bench-caller', is_admin: false, generate_api_key: true }))
    .token!;
  await create({
    name: 'bench-bearer',
    is_admin: false,
    generate_api_key: false,
    api_client_id: BEARER_CLIENT,
  });
  const bearerToken = await oidc.provider.issueToken(BEARER_CLIENT);
  const stack: BenchStack = {
    dir,
    db,
    oidc,
    a,
    b,
    baseline,
    fast,
    cookieA,
    apiKey,
    bearerToken,
    roots: (wrkPid) => ({
      wrk: wrkPid,
      'nginx A': a.pids.nginx,
      'sidecar A': a.pids.sidecar,
      'engine A': a.pids.app,
      'nginx baseline': baseline.pid,
      'nginx B': b.pids.nginx,
      'sidecar B': b.pids.sidecar,
      'engine B': b.pids.app,
      ...fast.roots(),
      postgres: db.pid,
      // The runners themselves (idle once started); their children are the roots above.
      'runner A': a.pids.runner,
      'runner B': b.pids.runner,
      bench: process.pid,
    }),
  };
  await checkStack(stack);
  return stack;
}

/**
 * The measurements mean something only if: the baseline really has auth off and reaches the
 * engine; the gateway refuses a caller without credentials and lets each credential through.
 */
async function checkStack(s: BenchStack): Promise<void> {
  const expect = async (
    url: string,
    ca: string,
    headers: Record<string, string>,
    want: number,
    what: string,
  ) => {
    const res = await http(`${url}${BENCH_PATH}`, {
      headers: { Host: 'localhost', ...headers },
      tls: { ca, servername: 'localhost' },
    });
    if (res.status !== want)
      throw new Error(`${what}: expected ${want}, got ${res.status} ${res.text}`);
  };
  await expect(s.baseline.url, s.a.ca, { Cookie: s.cookieA }, 200, 'baseline without credentials');
  await expect(s.a.url, s.a.ca, { Cookie: s.cookieA }, 401, 'gateway A without credentials');
  await expect(
    s.a.url,
    s.a.ca,
    { Cookie: s.cookieA, Authorization: `apk ${s.apiKey}` },
    200,
    'gateway A, API key',
  );
  await expect(
    s.a.url,
    s.a.ca,
    { Cookie: s.cookieA, Authorization: `Bearer ${s.bearerToken}` },
    200,
    'gateway A, bearer token',
  );
  await checkFast(s);
}
