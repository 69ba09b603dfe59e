/**
 * How many bearer-token verifications per second the sidecar sustains for a token whose keys
 * are already cached: through `/auth` (the real sidecar as its own process, HTTP keep-alive as
 * nginx talks to it) and through the verifier in-process. Real parts throughout: embedded
 * PostgreSQL, oidc-provider over HTTPS with a test CA. An API key `/auth` run gives the scale.
 *
 *   npm run build && node dist/bench/oidc-verify.js [seconds=5] [concurrency=32]
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import type { OidcOptions } from '../sidecar/auth/method-toggles.js';
import { ClientDirectory } from '../sidecar/clients/store/directory.js';
import { ClientReads } from '../sidecar/clients/store/reads.js';
import { createPool } from '../sidecar/db/pool.js';
import { silentLogger } from '../sidecar/log.js';
import { readOidcSettings } from '../sidecar/oidc/settings.js';
import { OidcBearerVerifier } from '../sidecar/oidc/verifier.js';
import { startEmbeddedPostgres } from '../test/support/embedded-postgres.js';
import { http } from '../test/support/http.js';
import { testProof } from '../test/support/nginx-proof.js';
import { TestOidcProvider } from '../test/support/oidc-provider.js';
import { nginxOidcHeaders } from '../test/support/oidc-sidecar.js';
import { createTestPki } from '../test/support/oidc-tls.js';
import { startProcess } from '../test/support/process.js';

const seconds = Number(process.argv[2] ?? '5');
const concurrency = Number(process.argv[3] ?? '32');
const CLIENT = 'svc-bench';

interface Result {
  perSecond: number;
  p99Ms: number;
}

/** Runs `once` from `concurrency` loops for `seconds`; completed calls per second and p99. */
async function measure(once: () => Promise<void>): Promise<Result> {
  const latencies: number[] = [];
  const started = performance.now();
  const end = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        const t = performance.now();
        await once();
        latencies.push(performance.now() - t);
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    perSecond: latencies.length / elapsed,
    p99Ms: latencies[Math.floor(latencies.length * 0.99)] ?? 0,
  };
}

/** GET /auth with `headers` on a keep-alive agent; anything but 204 is an error. */
function authCall(url: string, headers: Record<string, string>, agent: Agent) {
  return () =>
    new Promise<void>((resolve, reject) => {
      const req = request(`${url}/auth`, { headers, agent }, (res) => {
        res.resume();
        res.on('end', () =>
          res.statusCode === 204 ? resolve() : reject(new Error(`status ${res.statusCode}`)),
        );
      });
      req.on('error', reject);
      req.end();
    });
}

const line = (what: string, r: Result) =>
  console.log(
    `  ${what.padEnd(34)} ${String(Math.round(r.perSecond)).padStart(6)} /s   p99 ${r.p99Ms.toFixed(1)} ms`,
  );

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'gw-bench-oidc-'));
  // Its own directory: embedded-postgres hands it to an unprivileged user when run as root.
  const pgDir = await mkdtemp(join(tmpdir(), 'gw-bench-pg-'));
  const postgres = await startEmbeddedPostgres(pgDir);
  const pki = createTestPki();
  const caFile = join(dir, 'ca.pem');
  await writeFile(caFile, pki.caPem);
  const provider = await TestOidcProvider.start(pki, [CLIENT]);
  // The bench asks the sidecar as nginx does: with the proof of nginx's file.
  const proof = await testProof();
  const sidecar = startProcess(
    process.execPath,
    [fileURLToPath(new URL('../sidecar/main.js', import.meta.url))],
    {
      ...process.env,
      DATABASE_URL: postgres.adminUrl,
      HOST: '127.0.0.1',
      PORT: '0',
      API_KEY_CREATE: 'true',
      OIDC_CA_FILE: caFile,
      ...proof.env,
    },
  );
  const pool = createPool(postgres.adminUrl, silentLogger);
  try {
    const [, adminKey] = await sidecar.waitFor(/NEWLY GENERATED API KEY: (\S+)/);
    const [, url] = await sidecar.waitFor(/"url":"(http:[^"]+)"/);
    const created = await http(`${url}/v1/management/api-clients`, {
      method: 'POST',
      headers: { ...proof.header, Authorization: `apk ${adminKey}` },
      json: { name: 'bench', is_admin: false, generate_api_key: false, api_client_id: CLIENT },
    });
    if (created.status !== 201) throw new Error(`creating the client: ${created.text}`);
    const token = await provider.issueToken(CLIENT);
    const oidcHeaders = { ...proof.header, ...nginxOidcHeaders(provider.discoveryUrl) };

    const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
    const bearer = authCall(url!, { ...oidcHeaders, Authorization: `Bearer ${token}` }, agent);
    await bearer(); // discovery and keys are fetched here, once
    const overHttp = await measure(bearer);
    const apkHeaders = {
      ...oidcHeaders,
      'X-Gateway-Api-Keys-Enabled': 'true',
      Authorization: `apk ${adminKey}`,
    };
    const apkOverHttp = await measure(authCall(url!, apkHeaders, agent));
    agent.destroy();
    const sidecarHits = { ...provider.hits };

    const verifier = new OidcBearerVerifier(
      readOidcSettings({ OIDC_CA_FILE: caFile }),
      new ClientDirectory(new ClientReads(pool)),
      silentLogger,
    );
    const options: OidcOptions = {
      discovery: provider.discoveryUrl,
      sslVerify: true,
      acceptUnsupportedAlg: false,
      acceptNoneAlg: false,
      redirectUri: '',
      clientIdClaim: 'sub',
      clientNameClaim: 'sub',
      audience: '',
    };
    const verify = async () => {
      const decision = await verifier.verify(token, options);
      if (!decision.ok) throw new Error(`refused: ${decision.jwtError}`);
    };
    await verify();
    const inProcess = await measure(verify);

    console.log(
      `Bearer token (RS256, keys cached), ${seconds} s per run, ${concurrency} concurrent callers:`,
    );
    line('GET /auth, Bearer token', overHttp);
    line('GET /auth, API key (for scale)', apkOverHttp);
    line('verify() in-process, with DB look-up', inProcess);
    console.log(
      `  provider hits during the /auth runs: discovery ${sidecarHits.discovery}, jwks ${sidecarHits.jwks}`,
    );
  } finally {
    await pool.end();
    await sidecar.stop();
    await provider.stop();
    await postgres.stop();
    await rm(dir, { recursive: true, force: true });
    await rm(pgDir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
