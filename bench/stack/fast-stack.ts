import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { RawSettings } from '../../generator/index.js';
import { freePort } from '../../native/ports.js';
import { lastLines } from '../../test/support/log-lines.js';
import type { Cleanup } from '../cleanup.js';
import type { ProcessRoots } from '../cpu-split.js';
import { Client } from '../load/client.js';
import { gatewaySettings, renderGatewayConfig } from './app-upstream.js';
import { type Baseline, startBaseline, startCacheOff } from './baseline.js';
import { BENCH_PATH } from './engine-session.js';
import type { BenchGateway } from './gateway.js';
import { STATIC_BODY, type StaticUpstream, startStaticUpstream } from './static-upstream.js';

/**
 * The fast-upstream rows (issue 10): gateway B with the static responder as its app, its
 * auth-off baseline (B's own default.conf, derived exactly as A's baseline is), and B's
 * configuration with the decision cache off (every request asks B's sidecar).
 */
export interface FastStack {
  responder: StaticUpstream;
  baseline: Baseline;
  cacheOff: Baseline;
  roots(): ProcessRoots;
}

/**
 * Before gateway B starts: the static responder runs, and B's configuration directory is
 * rendered with it as the app upstream, on the port B will be started with.
 */
export async function startFastUpstream(
  dir: string,
  homeB: string,
  env: Record<string, string>,
  cleanup: Cleanup,
): Promise<{ responder: StaticUpstream; port: number }> {
  const responder = await startStaticUpstream(join(dir, 'static'));
  cleanup.add('static upstream nginx', responder.stop);
  const port = await freePort();
  await renderGatewayConfig(homeB, envOfB(env, port), responder.upstream);
  return { responder, port };
}

const envOfB = (env: Record<string, string>, port: number) => ({
  ...env,
  GATEWAY_FQDN: 'localhost',
  GATEWAY_HTTPS_PORT: `${port}`,
});

/** B's settings as startFastUpstream rendered them, with `more` over them (the tracing row's). */
export function settingsOfB(
  s: { b: BenchGateway; oidc: { gatewayEnv: Record<string, string> }; fast: FastStack },
  more: RawSettings = {},
) {
  return gatewaySettings(
    s.b.home,
    envOfB(s.oidc.gatewayEnv, s.b.port),
    s.fast.responder.upstream,
    more,
  );
}

/** Once B runs: the two nginx derived from B's configuration. */
export async function startFastParts(
  dir: string,
  responder: StaticUpstream,
  b: BenchGateway,
  cleanup: Cleanup,
  say: (line: string) => void,
): Promise<FastStack> {
  const baseline = await startBaseline(join(dir, 'fast-baseline'), b.configDir);
  cleanup.add('fast baseline nginx', baseline.stop);
  const cacheOff = await startCacheOff(join(dir, 'cache-off'), b.configDir);
  cleanup.add('cache-off nginx', cacheOff.stop);
  say(`fast upstream ${responder.upstream}: gateway B ${b.url}, B's baseline ${baseline.url}`);
  say(`  B's baseline changes the same lines as A's; cache-off copy of B: ${cacheOff.url}`);
  for (const change of cacheOff.changes) say(`  ${change}`);
  return {
    responder,
    baseline,
    cacheOff,
    roots: () => ({
      'static upstream': responder.pid,
      'nginx fast baseline': baseline.pid,
      'nginx cache-off': cacheOff.pid,
    }),
  };
}

/**
 * The fast rows mean something only if: B's baseline has auth off and its answer is the
 * static responder's; B and its cache-off copy refuse a caller without credentials and let
 * each credential through to the static responder.
 */
export async function checkFast(s: {
  b: BenchGateway;
  fast: FastStack;
  apiKey: string;
  bearerToken: string;
}): Promise<void> {
  const ask = async (url: string, headers: Record<string, string>, want: number, what: string) => {
    const client = new Client(url, s.b.ca);
    try {
      const res = await client.send('GET', BENCH_PATH, headers);
      if (res.status !== want || (want === 200 && res.text !== STATIC_BODY))
        throw new Error(
          `${what}: expected ${want} from the static upstream, got ${res.status} ${res.text}\n${await logTails(s.b.home)}`,
        );
    } finally {
      client.close();
    }
  };
  const apk = { Authorization: `apk ${s.apiKey}` };
  const bearer = { Authorization: `Bearer ${s.bearerToken}` };
  await ask(s.fast.baseline.url, {}, 200, "B's baseline without credentials");
  await ask(s.b.url, {}, 401, 'gateway B without credentials');
  await ask(s.b.url, apk, 200, 'gateway B, API key');
  await ask(s.b.url, bearer, 200, 'gateway B, bearer token');
  await ask(s.fast.cacheOff.url, {}, 401, 'cache-off copy of B without credentials');
  await ask(s.fast.cacheOff.url, apk, 200, 'cache-off copy of B, API key');
  await ask(s.fast.cacheOff.url, bearer, 200, 'cache-off copy of B, bearer token');
}

/** The end of B's nginx and sidecar logs: what a refused check needs to be understood. */
async function logTails(home: string): Promise<string> {
  const tail = async (name: string) =>
    `--- ${name}\n${lastLines(await readFile(join(home, 'logs', name), 'utf8').catch(() => ''))}`;
  return `${await tail('nginx-error.log')}\n${await tail('sidecar.log')}`;
}
