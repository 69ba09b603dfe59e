import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { CONTROL } from '../../../common/contract.js';
import { silentLogger } from '../../../sidecar/log.js';
import { NginxControl } from '../../../sidecar/nginx/control.js';
import type { DecisionInvalidator } from '../../../sidecar/nginx/invalidator.js';
import { ChangeListener } from '../../../sidecar/revocation/change-listener.js';
import { freshDatabase } from '../../support/database.js';
import { http } from '../../support/http.js';
import { CLIENTS, createClient, uniqueName } from '../../support/management.js';
import { apk, startTestSidecar, type TestSidecar } from '../../support/sidecar.js';

// What reaches nginx when a client is created, changed or deleted, through the real triggers
// (migrations 0003, 0007, 0010) and LISTEN on a real PostgreSQL: a creation is announced as
// such, so nginx forgets only that the id was unknown (docs/decisions/20261127-creation-notice.md).

type Call = { kind: 'clients' | 'created' | 'all'; ids: number[] };

/** Records what the listener asks of nginx, in order. */
function recordingInvalidator(): DecisionInvalidator & { calls: Call[] } {
  const calls: Call[] = [];
  const record = async (kind: Call['kind'], ids: readonly number[]) => {
    calls.push({ kind, ids: [...ids] });
    return true;
  };
  return {
    calls,
    clients: (ids) => record('clients', ids),
    created: (ids) => record('created', ids),
    all: () => record('all', []),
  };
}

let sidecar: TestSidecar;
let listener: ChangeListener;
const invalidator = recordingInvalidator();

beforeAll(async () => {
  const db = await freshDatabase();
  sidecar = await startTestSidecar(db);
  listener = new ChangeListener({ databaseUrl: db, invalidator, log: silentLogger });
  listener.start();
  await listener.ready;
});
afterAll(async () => {
  await listener?.stop();
  await sidecar?.close();
});

/** Waits until the listener has made `count` calls after `from`; returns them. */
async function callsAfter(from: number, count: number): Promise<Call[]> {
  for (let tries = 0; tries < 200 && invalidator.calls.length < from + count; tries += 1) {
    await new Promise((r) => setTimeout(r, 10));
  }
  return invalidator.calls.slice(from);
}

describe('the change listener', () => {
  test('a create is announced as a creation; a change and a delete as changes', async () => {
    // The (re)connection's own "everything" comes first.
    expect(invalidator.calls[0]).toEqual({ kind: 'all', ids: [] });
    const from = invalidator.calls.length;
    const { id } = await createClient(sidecar.url, sidecar.adminKey, {
      name: uniqueName('notice'),
      is_admin: false,
      generate_api_key: true,
    });
    expect(await callsAfter(from, 1)).toEqual([{ kind: 'created', ids: [id] }]);
    const renamed = await http(`${sidecar.url}${CLIENTS}/${id}`, {
      method: 'PUT',
      headers: apk(sidecar.adminKey),
      json: { name: uniqueName('renamed') },
    });
    expect(renamed.status).toBe(200);
    expect(await callsAfter(from + 1, 1)).toEqual([{ kind: 'clients', ids: [id] }]);
    const deleted = await http(`${sidecar.url}${CLIENTS}/${id}`, {
      method: 'DELETE',
      headers: apk(sidecar.adminKey),
    });
    expect(deleted.status).toBe(200);
    expect(await callsAfter(from + 2, 1)).toEqual([{ kind: 'clients', ids: [id] }]);
  });
});

describe('NginxControl.created against a configuration without the endpoint', () => {
  // A stand-in for an nginx whose default.conf was rendered before /created existed (named as
  // such: it answers the control paths as that configuration's locations do).
  let home: string;
  let oldNginx: Server;
  const seen: { path: string; body: string }[] = [];

  beforeAll(async () => {
    home = await mkdtemp(join(tmpdir(), 'gw-old-control-'));
    oldNginx = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => {
        body += c.toString();
      });
      req.on('end', () => {
        seen.push({ path: req.url ?? '', body });
        res.writeHead(req.url === CONTROL.invalidate ? 204 : 404).end();
      });
    });
    oldNginx.listen(join(home, 'control.sock'));
    await once(oldNginx, 'listening');
  });
  afterAll(async () => {
    oldNginx?.close();
    await rm(home, { recursive: true, force: true });
  });

  test('falls back to invalidating the new clients, which also ends their unknown ids', async () => {
    const control = new NginxControl(join(home, 'control.sock'), silentLogger);
    expect(await control.created([7, 8])).toBe(true);
    expect(seen).toEqual([
      { path: CONTROL.created, body: '7,8' },
      { path: CONTROL.invalidate, body: '7,8' },
    ]);
  });
});
