import { readFileSync } from 'node:fs';
import { Validator } from '@seriousme/openapi-schema-validator';
import type { Router } from 'express';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { Authenticator } from '../../../sidecar/auth/authenticator.js';
import { expressPath } from '../../../sidecar/http/operation.js';
import { silentLogger } from '../../../sidecar/log.js';
import { createManagementApp } from '../../../sidecar/management/app.js';
import { COMMITTED_DOCUMENT, documentText } from '../../../sidecar/management/openapi-document.js';
import { NO_INVALIDATOR } from '../../../sidecar/nginx/invalidator.js';
import { freshDatabase } from '../../support/database.js';
import { http } from '../../support/http.js';
import { CLIENTS, createClient } from '../../support/management.js';
import { committedDocument } from '../../support/openapi-check.js';
import { sharedSecurityTests } from '../../support/shared-security.js';
import { apk, startTestSidecar, type TestSidecar } from '../../support/sidecar.js';

const OPENAPI = '/v1/management/openapi.json';

describe('the committed document', () => {
  test('docs/openapi.json is what the route declarations give (run `npm run openapi` after changing a route)', () => {
    expect(readFileSync(COMMITTED_DOCUMENT, 'utf8')).toBe(documentText());
  });

  test('is a valid OpenAPI 3.1 document (@seriousme/openapi-schema-validator)', async () => {
    const validator = new Validator();
    const result = await validator.validate(committedDocument());
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  test('the validator is not a rubber stamp: a broken document is refused', async () => {
    const broken = structuredClone(committedDocument()) as { paths: Record<string, unknown> };
    broken.paths[OPENAPI] = { get: { responses: { 200: {} } } }; // a response needs a description
    expect((await new Validator().validate(broken)).valid).toBe(false);
  });

  test('every route Express serves under /v1/management is in the document, and nothing else', () => {
    const app = createManagementApp({
      store: {} as never,
      authenticator: new Authenticator({} as never, null),
      invalidator: NO_INVALIDATOR,
      log: silentLogger,
      changes: {} as never,
      auditDb: {} as never,
      settings: {} as never,
    });
    const served = new Set<string>();
    const walk = (stack: Router['stack']) => {
      for (const layer of stack) {
        const route = layer.route as { path: string; methods: Record<string, boolean> } | undefined;
        // Routes elsewhere (a console's pages, say) are not the management API's.
        if (route?.path.startsWith('/v1/management/')) {
          for (const [method, on] of Object.entries(route.methods)) {
            if (on && method !== '_all') served.add(`${method} ${route.path}`);
          }
        }
        const inner = (layer.handle as { stack?: Router['stack'] }).stack;
        if (inner) walk(inner);
      }
    };
    walk((app as unknown as { router: Router }).router.stack);
    const documented = new Set<string>();
    const doc = committedDocument() as { paths: Record<string, Record<string, unknown>> };
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const method of Object.keys(item)) {
        // Express answers HEAD with the GET route; the document lists it as its own operation.
        if (method !== 'head') documented.add(`${method} ${expressPath(path)}`);
      }
    }
    expect([...served].sort()).toEqual([...documented].sort());
    expect(served.size).toBeGreaterThanOrEqual(8);
  });
});

describe('GET /v1/management/openapi.json', () => {
  let sidecar: TestSidecar;
  let userKey: string;
  let deletedKey: string;

  beforeAll(async () => {
    sidecar = await startTestSidecar(await freshDatabase());
    const user = { is_admin: false, generate_api_key: true };
    userKey = (await createClient(sidecar.url, sidecar.adminKey, { ...user, name: 'reader' }))
      .token;
    const doomed = await createClient(sidecar.url, sidecar.adminKey, { ...user, name: 'gone' });
    deletedKey = doomed.token;
    await http(`${sidecar.url}${CLIENTS}/${doomed.id}`, {
      method: 'DELETE',
      headers: apk(sidecar.adminKey),
    });
  });
  afterAll(() => sidecar?.close());

  test('answers an admin with the committed document, as JSON', async () => {
    const res = await http(`${sidecar.url}${OPENAPI}`, { headers: apk(sidecar.adminKey) });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.json).toEqual(committedDocument());
  });

  test('is admin-only like the rest of /v1/management', async () => {
    const anonymous = await http(`${sidecar.url}${OPENAPI}`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.text).not.toContain('openapi');
  });

  test('other methods are 405 with Allow', async () => {
    const res = await http(`${sidecar.url}${OPENAPI}`, {
      method: 'POST',
      headers: apk(sidecar.adminKey),
    });
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('GET, HEAD');
  });

  sharedSecurityTests(
    () => ({ baseUrl: sidecar.url, adminKey: sidecar.adminKey, userKey, deletedKey }),
    { method: 'GET', path: OPENAPI },
  );
});
