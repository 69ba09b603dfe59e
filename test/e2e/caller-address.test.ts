import { randomBytes } from 'node:crypto';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { AUDIT_EVENTS_PATH } from '../../sidecar/audit/audit-operations.js';
import { freshDatabase } from '../support/database.js';
import { type HttpOptions, http } from '../support/http.js';
import { CLIENTS, createClient, uniqueName } from '../support/management.js';
import { startNativeStack } from '../support/native-stack.js';
import { apk } from '../support/sidecar.js';

// The caller's own address behind a balancer, end to end (real nginx, sidecar and PostgreSQL;
// docs/decisions/20261127-caller-address-behind-a-balancer.md): the gateway trusts 127.0.0.1 as
// a balancer (request_id.trusted_proxies), so a request from it speaks for the caller its
// X-Forwarded-For names: that caller's failure budget, the audit's source_address, the access
// log. 127.0.0.2 (loopback takes any 127.x source) is a peer nobody listed: what it writes in
// X-Forwarded-For changes nothing. Without trusted proxies at all: nginx-caller-address.test.ts.
const PER_ADDRESS = 5;
type NativeStack = Awaited<ReturnType<typeof startNativeStack>>;
let stack: NativeStack;
let settings: string;

beforeAll(async () => {
  settings = join(tmpdir(), `gw-caller-${randomBytes(4).toString('hex')}.yaml`);
  await writeFile(
    settings,
    [
      'request_id:',
      '  trusted_proxies: [127.0.0.1/32]',
      'failure_budget:',
      `  per_address: ${PER_ADDRESS}`,
      // The per-address budget counts failures the sidecar had to decide: with the key table's
      // replica an unknown id is nginx's to refuse and spends none (key-table.test.ts), so the
      // ids guessed here are asked about, as without it.
      'key_table:',
      '  enabled: false',
      '',
    ].join('\n'),
  );
  stack = await startNativeStack({
    env: { DATABASE_URL: await freshDatabase(), GATEWAY_SETTINGS: settings },
  });
}, 240_000);
afterAll(async () => {
  await stack?.close();
  await rm(settings, { force: true });
});

/** A request from the peer `from` (a loopback address), as a balancer there would send it. */
async function from(peer: string, path: string, options: HttpOptions = {}) {
  return http(`${stack.baseUrl}${path}`, {
    ...options,
    tls: { ...(await stack.tls()), localAddress: peer },
    connectTo: '127.0.0.1',
  });
}

/** A key id no client has, never asked before: the sidecar is asked, and refuses. */
let unknownId = 900_000_000 + Math.floor(Math.random() * 1_000_000);
const unknownKey = () => `${unknownId++}.${randomBytes(32).toString('base64url')}`;

/** The statuses of `count` unknown keys from `peer`, the i-th naming `forwarded(i)`. */
async function guesses(peer: string, count: number, forwarded: (i: number) => string) {
  const statuses: number[] = [];
  for (let i = 0; i < count; i += 1) {
    const headers = { ...apk(unknownKey()), 'X-Forwarded-For': forwarded(i) };
    statuses.push((await from(peer, '/api', { headers })).status);
  }
  return statuses;
}

const refusedThenLimited = [...Array(PER_ADDRESS).fill(401), 429];

async function newKey(): Promise<{ id: number; token: string }> {
  return createClient(
    stack.baseUrl,
    stack.adminKey,
    { name: uniqueName('caller'), is_admin: false, generate_api_key: true },
    { ...(await stack.tls()), connectTo: '127.0.0.1' },
  );
}

describe('the per-address failure budget behind a trusted balancer', () => {
  test('wrong keys spend the forwarded caller’s budget; other callers through the balancer still pass', async () => {
    const caller = '203.0.113.7';
    expect(await guesses('127.0.0.1', PER_ADDRESS + 1, () => caller)).toEqual(refusedThenLimited);
    const fresh = await newKey();
    // Even a right key, never seen before, is not asked about for the caller past its budget...
    const limited = await from('127.0.0.1', '/api', {
      headers: { ...apk(fresh.token), 'X-Forwarded-For': caller },
    });
    expect(limited.status).toBe(429);
    expect((limited.json as { errors: { code: string }[] }).errors[0]!.code).toBe(
      'TOO_MANY_FAILED_ATTEMPTS',
    );
    // ...while another caller through the same balancer, and the balancer itself, are.
    expect(await guesses('127.0.0.1', 1, () => '203.0.113.8')).toEqual([401]);
    const other = await from('127.0.0.1', '/api', {
      headers: { ...apk(fresh.token), 'X-Forwarded-For': '203.0.113.9' },
    });
    expect(other.status).toBe(200);
    expect((await from('127.0.0.1', '/api', { headers: apk(unknownKey()) })).status).toBe(401);
  }, 60_000);

  test('a peer nobody listed spends its own budget, whatever X-Forwarded-For it writes', async () => {
    expect(await guesses('127.0.0.2', PER_ADDRESS + 1, (i) => `198.51.100.${i + 1}`)).toEqual(
      refusedThenLimited,
    );
  }, 60_000);
});

describe("the caller's address in the audit trail and the access log", () => {
  /** Creates a client from `peer` naming `forwarded`; the create's audit event. */
  async function auditedCreate(peer: string, forwarded: string) {
    const res = await from(peer, CLIENTS, {
      method: 'POST',
      headers: { ...apk(stack.adminKey), 'X-Forwarded-For': forwarded },
      json: { name: uniqueName('audited'), is_admin: false, generate_api_key: true },
    });
    expect(res.status, res.text).toBe(201);
    const id = (res.json as { api_key_id: number }).api_key_id;
    const events = await from('127.0.0.1', `${AUDIT_EVENTS_PATH}?target=${id}`, {
      headers: apk(stack.adminKey),
    });
    expect(events.status, events.text).toBe(200);
    const items = (events.json as { items: { action: string; source_address: string }[] }).items;
    expect(items.map((e) => e.action)).toEqual(['api_client.create']);
    return { event: items[0]!, requestId: res.headers['x-request-id'] as string };
  }

  test('source_address is the caller the balancer names, not the balancer', async () => {
    const { event } = await auditedCreate('127.0.0.1', '198.51.100.20, 203.0.113.7');
    expect(event.source_address).toBe('203.0.113.7');
  }, 30_000);

  test('from a peer nobody listed, source_address is that peer', async () => {
    const { event } = await auditedCreate('127.0.0.2', '203.0.113.7');
    expect(event.source_address).toBe('127.0.0.2');
  }, 30_000);

  test('the access log names the caller', async () => {
    const { requestId } = await auditedCreate('127.0.0.1', '203.0.113.44');
    const log = join(stack.home, 'logs', 'nginx-access.log');
    const line = await vi.waitFor(
      async () => {
        const found = (await readFile(log, 'utf8'))
          .split('\n')
          .find((l) => l.endsWith(` ${requestId}`));
        if (!found) throw new Error(`no line for ${requestId} yet`);
        return found;
      },
      { timeout: 5_000, interval: 100 },
    );
    expect(line.startsWith('203.0.113.44 - ')).toBe(true);
  }, 30_000);
});
