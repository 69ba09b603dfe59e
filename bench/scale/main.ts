/**
 * `npm run bench:scale`: issue 15's figures at 10^4, 10^5 and 10^6 clients, on one native
 * gateway (`npm start`'s runner) and the embedded PostgreSQL it is benched with. The table is
 * filled with SQL (generate_series), never through the API; then, for each size: list every
 * client through nginx (time to last byte, size, the sidecar's RSS sampled every 20 ms during
 * the list and after it), first-sight API keys (never presented before, so nginx asks the
 * sidecar) one at a time while idle and while list-alls run back to back, creates, and pages of
 * 100 deep in the table. `--sizes 10000,100000` picks other sizes.
 * Then issue 38's row (bench/scale/distinct-keys.ts): callers spread uniformly over 10^6
 * distinct keys against the same nginx with authentication off, on a gateway of its own with
 * the static responder behind it, and the shared memory its key table takes
 * (`--distinct-keys N`, 0 to skip; `--key-table-size 192m`).
 * Everything started is stopped and the temporary directory removed, however the run ends.
 */
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeCursor } from '../../sidecar/clients/listing/cursor.js';
import { Cleanup } from '../cleanup.js';
import { cpuMeter, type ProcessRoots } from '../cpu-split.js';
import { Client } from '../load/client.js';
import { curlGet } from '../load/curl-get.js';
import { rssMb, rssSampler } from '../rss.js';
import { plainCommandLines } from '../stack/command-lines.js';
import { BENCH_PATH, engineSessionCookie } from '../stack/engine-session.js';
import { fillTo } from '../stack/fill-clients.js';
import { startGateway } from '../stack/gateway.js';
import { startSharedDatabase } from '../stack/postgres.js';
import { CLIENTS_PATH } from '../stack/setup.js';
import { percentile } from '../stats.js';
import { ensureWrk } from '../wrk/install.js';
import {
  measureScaleDistinctKeys,
  parseDistinctKeys,
  SCALE_DISTINCT_MIN,
  SCALE_SHARED_MEMORY_MAX_MB,
  type ScaleDistinctKeys,
} from './distinct-keys.js';

interface Row {
  size: number;
  fillS: number;
  listS: number;
  listMb: number;
  total: number;
  rssBefore: number;
  rssDuring: number;
  rssAfter: number;
  authIdle: { p50: number; p99: number };
  authDuring: { p50: number; p99: number; probes: number; lists: number };
  createP50: number;
  pageFirstP50: number;
  pageDeepIdP50: number;
  pageDeepNameP50: number;
  getDeepP50: number;
}

const PROBES = 200;
const CREATES = 200;
const PAGES = 50;

function parseSizes(argv: string[]): number[] {
  const at = argv.indexOf('--sizes');
  if (at < 0) return [10_000, 100_000, 1_000_000];
  const sizes = (argv[at + 1] ?? '').split(',').map(Number);
  if (sizes.some((n) => !Number.isInteger(n) || n < 1000 || n > 9_000_000)) {
    throw new Error('--sizes takes integers from 1000 to 9000000, comma separated');
  }
  return sizes.sort((a, b) => a - b);
}

async function main(): Promise<void> {
  const sizes = parseSizes(process.argv.slice(2));
  const distinct = parseDistinctKeys(process.argv.slice(2));
  const started = performance.now();
  const say = (line: string) =>
    process.stdout.write(
      `[${((performance.now() - started) / 1000).toFixed(0).padStart(4)}s] ${line}\n`,
    );
  const cleanup = new Cleanup();
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => void cleanup.runAll(say).then(() => process.exit(130)));
  }
  const dir = await mkdtemp(join(tmpdir(), 'gw-scale-'));
  await chmod(dir, 0o755);
  cleanup.add('temporary directory', () => rm(dir, { recursive: true, force: true }));
  try {
    const db = await startSharedDatabase(join(dir, 'pg'));
    cleanup.add('PostgreSQL', db.stop);
    const password = randomBytes(12).toString('base64url');
    const gw = await startGateway({
      name: 'scale',
      home: join(dir, 'g'),
      databaseUrl: db.url,
      createKey: true,
      env: {},
      engineAdminPassword: password,
    });
    cleanup.add('gateway', gw.stop);
    plainCommandLines({ sidecar: gw.pids.sidecar, engine: gw.pids.app, nginx: gw.pids.nginx });
    const cookie = await engineSessionCookie(gw.appSocket, password);
    const admin = { Authorization: `apk ${gw.adminKey}` };
    say(`gateway ${gw.url}, sidecar pid ${gw.pids.sidecar}; sizes ${sizes.join(', ')}`);
    const rows: Row[] = [];
    for (const size of sizes) {
      const fillS = await fillTo(db.url, size);
      say(`${size} clients: filled in ${fillS.toFixed(1)} s`);
      rows.push({
        size,
        fillS,
        ...(await measure(
          gw.url,
          gw.ca,
          join(gw.configDir, 'nginx/ssl/nginx.crt'),
          gw.pids.sidecar,
          { sidecar: gw.pids.sidecar, nginx: gw.pids.nginx, postgres: db.pid, engine: gw.pids.app },
          admin,
          cookie,
          size,
          say,
        )),
      });
    }
    process.stdout.write(`\n${table(rows)}\n`);
    if (distinct.keys > 0) {
      const wrk = await ensureWrk(say);
      say(`distinct keys: ${distinct.keys} keys, key_table.size ${distinct.keyTableSize}`);
      try {
        const row = await measureScaleDistinctKeys(
          dir,
          cleanup,
          wrk,
          {
            ...distinct,
            seconds: 4,
            rounds: 4,
            warmupSeconds: 3,
            connections: 32,
          },
          say,
        );
        process.stdout.write(`\n${distinctTable(row)}\n`);
      } catch (err) {
        process.stdout.write(
          `\nissue 38 at ${distinct.keys} distinct keys: NOT MEASURED: ${(err as Error).message.split('\n', 1)[0]}\n`,
        );
        process.exitCode = 1;
      }
    }
  } finally {
    await cleanup.runAll(say);
  }
}

async function measure(
  url: string,
  ca: string,
  caFile: string,
  sidecarPid: number | undefined,
  roots: ProcessRoots,
  admin: Record<string, string>,
  cookie: string,
  size: number,
  say: (line: string) => void,
): Promise<Omit<Row, 'size' | 'fillS'>> {
  const client = new Client(url, ca, 1);
  const timed = async (method: string, path: string, body?: unknown) => {
    const res = await client.send(method, path, admin, body);
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${res.text}`);
    return res;
  };
  try {
    // Creates, one at a time: the create p50, and the fresh keys of the /auth probes.
    const tag = randomBytes(3).toString('hex');
    const creates: number[] = [];
    const keys: string[] = [];
    for (let i = 0; i < CREATES + PROBES; i += 1) {
      const res = await timed('POST', CLIENTS_PATH, {
        name: `probe-${tag}-${i}`,
        is_admin: false,
        generate_api_key: true,
      });
      if (i < CREATES) creates.push(res.ms);
      keys.push((JSON.parse(res.text) as { token: string }).token);
    }
    const half = keys.length / 2;
    const probe = new Client(url, ca, 1);
    const ask = (key: string) =>
      probe.send('GET', BENCH_PATH, { Cookie: cookie, Authorization: `apk ${key}` });
    await ask(keys[0]!); // TLS set-up is not part of any figure
    const firstSight = async (batch: string[], until?: () => boolean) => {
      const ms: number[] = [];
      for (const key of batch) {
        if (until?.()) break;
        const res = await ask(key);
        if (res.status !== 200) throw new Error(`first-sight probe: ${res.status} ${res.text}`);
        ms.push(res.ms);
      }
      return ms;
    };
    const idle = await firstSight(keys.slice(1, half));

    // One list-all alone: time to last byte, body size, RSS during and after.
    const rssBefore = rssMb(sidecarPid);
    const sampler = rssSampler(sidecarPid);
    const cpu = await cpuMeter(() => roots);
    const list = await curlGet(`${url}${CLIENTS_PATH}`, caFile, admin, true);
    const rssDuring = sampler.stop();
    const split = await cpu();
    if (list.status !== 200) throw new Error(`list-all: ${list.status} ${list.tail}`);
    const total = Number(/"total":(\d+)/.exec(list.tail)?.[1]);
    await new Promise((r) => setTimeout(r, 500));
    const rssAfter = rssMb(sidecarPid);
    say(
      `${size}: list-all ${(list.ms / 1000).toFixed(2)} s, ${(list.bytes / 1e6).toFixed(1)} MB, RSS ${rssDuring.toFixed(0)} MB; cores: ${formatSplit(split)}`,
    );

    // First-sight probes while list-alls run back to back.
    let listing = true;
    let lists = 0;
    const background = (async () => {
      while (listing) {
        const res = await curlGet(`${url}${CLIENTS_PATH}`, caFile, admin, false);
        if (res.status !== 200) throw new Error(`list-all: ${res.status}`);
        lists += 1;
      }
    })();
    // Let the first list get going before probing.
    await new Promise((r) => setTimeout(r, 100));
    const during = await firstSight(keys.slice(half));
    listing = false;
    await background;
    probe.close();

    // Pages of 100: the first, and one 90% of the way in by id and by name.
    const deep = Math.floor(size * 0.9);
    const pageMs = async (query: string) => {
      const ms: number[] = [];
      for (let i = 0; i < PAGES; i += 1)
        ms.push((await timed('GET', `${CLIENTS_PATH}${query}`)).ms);
      return percentile(ms, 50);
    };
    const idCursor = encodeCursor({ sort: 'id', direction: 'after', key: [deep] });
    const name = `scale-${String(deep).padStart(7, '0')}`;
    const nameCursor = encodeCursor({ sort: 'name', direction: 'after', key: [name, 1] });
    const getMs: number[] = [];
    for (let i = 0; i < PAGES; i += 1)
      getMs.push((await timed('GET', `${CLIENTS_PATH}/${deep - i}`)).ms);
    return {
      listS: list.ms / 1000,
      listMb: list.bytes / 1e6,
      total,
      rssBefore,
      rssDuring,
      rssAfter,
      authIdle: { p50: percentile(idle, 50), p99: percentile(idle, 99) },
      authDuring: {
        p50: percentile(during, 50),
        p99: percentile(during, 99),
        probes: during.length,
        lists,
      },
      createP50: percentile(creates, 50),
      pageFirstP50: await pageMs('?limit=100'),
      pageDeepIdP50: await pageMs(`?limit=100&cursor=${idCursor}`),
      pageDeepNameP50: await pageMs(`?limit=100&cursor=${nameCursor}`),
      getDeepP50: percentile(getMs, 50),
    };
  } finally {
    client.close();
  }
}

function table(rows: Row[]): string {
  const head = [
    'clients',
    'fill s',
    'list-all s',
    'MB',
    'total',
    'RSS before MB',
    'RSS during MB',
    'RSS after MB',
    'auth p50/p99 idle ms',
    'auth p50/p99 during list ms',
    'create p50 ms',
    'page 1 p50 ms',
    'page deep id p50 ms',
    'page deep name p50 ms',
    'get p50 ms',
  ];
  const f = (n: number, d = 1) => n.toFixed(d);
  const lines = rows.map((r) => [
    String(r.size),
    f(r.fillS),
    f(r.listS, 2),
    f(r.listMb),
    String(r.total),
    f(r.rssBefore, 0),
    f(r.rssDuring, 0),
    f(r.rssAfter, 0),
    `${f(r.authIdle.p50)} / ${f(r.authIdle.p99)}`,
    `${f(r.authDuring.p50)} / ${f(r.authDuring.p99)} (${r.authDuring.probes} probes, ${r.authDuring.lists} lists)`,
    f(r.createP50),
    f(r.pageFirstP50),
    f(r.pageDeepIdP50),
    f(r.pageDeepNameP50),
    f(r.getDeepP50),
  ]);
  const out = [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`];
  for (const l of lines) out.push(`| ${l.join(' | ')} |`);
  const first = rows[0];
  const last = rows[rows.length - 1];
  if (first && last && first !== last) {
    out.push(
      `\ngrowth ${first.size} -> ${last.size} (x${last.size / first.size}): list-all x${f(last.listS / first.listS)}, ` +
        `RSS during x${f(last.rssDuring / first.rssDuring, 2)}, auth p99 during list x${f(last.authDuring.p99 / first.authDuring.p99, 2)}, ` +
        `deep page x${f(last.pageDeepIdP50 / first.pageDeepIdP50, 2)}`,
    );
  }
  return out.join('\n');
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`bench:scale failed: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  },
);

/** Issue 38's scale row, each figure with its target. */
function distinctTable(r: ScaleDistinctKeys): string {
  const mb = (bytes: number) => (bytes / 2 ** 20).toFixed(1);
  const t = r.keyTable;
  const shm = r.sharedMemory;
  const verdict = (pass: boolean) => (pass ? 'PASS' : 'FAIL');
  const ratioPass = r.errors === 0 && r.ratio >= SCALE_DISTINCT_MIN;
  const rows: string[][] = [
    [
      `callers over ${r.keys} distinct keys (uniform) ÷ auth off`,
      `${r.ratio.toFixed(3)} (gateway ${Math.round(r.gateway.rps)} req/s: ${r.gateway.runs.join('/')}; ` +
        `baseline ${Math.round(r.baseline.rps)}: ${r.baseline.runs.join('/')}; p99 ` +
        `${r.gateway.p99.toFixed(2)} vs ${r.baseline.p99.toFixed(2)} ms${r.errors ? `; INVALID: ${r.errors} errors` : ''})`,
      `>= ${SCALE_DISTINCT_MIN}`,
      verdict(ratioPass),
    ],
    [
      "nginx's shared memory, every zone (reserved, /proc/<pid>/smaps; the key table's included)",
      shm
        ? `${shm.totalMb.toFixed(1)} MB in ${shm.zones.length} zones (${shm.zones.map((z) => `${z.sizeMb.toFixed(0)}/${z.residentMb.toFixed(0)}`).join(', ')} MB reserved/resident)`
        : 'not read',
      `<= ${SCALE_SHARED_MEMORY_MAX_MB} MB`,
      shm ? verdict(shm.totalMb <= SCALE_SHARED_MEMORY_MAX_MB) : '',
    ],
    [
      `the key table (key_table.size ${r.keyTableSize ?? 'not a setting here'})`,
      t
        ? `${t.records} records, ${mb(t.usedBytes)} of ${mb(t.capacityBytes)} MB used ` +
          `(${t.records > 0 ? Math.round(t.usedBytes / t.records) : '-'} bytes a record), phase ${t.phase}${t.full ? ', FULL' : ''}`
        : 'no key table (GET /key-table on the control socket: none)',
      '(reference)',
      '',
    ],
    [
      'the replica loaded at start',
      t
        ? (r.settled
            ? `complete ${r.loadWaitSeconds.toFixed(1)} s after the gateway was started`
            : `NOT ALL HELD (${t.full ? 'full' : 'not complete'}) after a wait of ${r.loadWaitSeconds.toFixed(1)} s`) +
          (t.loadSeconds !== null ? `; nginx noted a load of ${t.loadSeconds.toFixed(1)} s` : '') +
          (Object.keys(r.sidecarGauges).length
            ? `; sidecar: ${Object.entries(r.sidecarGauges)
                .map(([k, v]) => `${k} ${Number(v.toFixed(3))}`)
                .join(', ')}`
            : '')
        : '-',
      '(reference)',
      '',
    ],
    [
      "nginx's workers copying the table after the load (module_copied)",
      `${r.sweep.copied} records copied in all workers, settled ${r.sweep.seconds.toFixed(1)} s after the load${r.sweep.settled ? '' : ' (STILL COPYING when measured)'}; ` +
        `each worker's private memory after the runs ${r.workersPrivateMb.map((mb) => mb.toFixed(0)).join(', ')} MB`,
      '(reference)',
      '',
    ],
    [
      'nginx asked its sidecar during the gateway runs (cache_miss)',
      r.counters
        ? `${r.counters.cache_miss ?? 0} times for ${r.gateway.requests} requests (key_hit ${r.counters.key_hit ?? 0}, module_hit ${r.counters.module_hit ?? 0})`
        : 'not read',
      '(reference)',
      '',
    ],
  ];
  const out = [
    `issue 38 at ${r.keys} distinct keys (insert ${r.insertSeconds.toFixed(1)} s; gateway with the static responder; wrk -t1 -c32, 4 rounds of 4 s)`,
    '| figure | measured | target | result |',
    '|---|---|---|---|',
    ...rows.map((cells) => `| ${cells.join(' | ')} |`),
  ];
  if (r.cpu) out.push(`cores during the gateway runs: ${formatSplit(r.cpu)}`);
  return out.join('\n');
}

function formatSplit(split: Record<string, number>): string {
  return Object.entries(split)
    .map(([name, cores]) => `${name} ${cores.toFixed(2)}`)
    .join(', ');
}
