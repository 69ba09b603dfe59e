import { mkdtemp, rm } from 'node:fs/promises';
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

// embedded-postgres registers an exit hook (async-exit-hook) whose beforeExit handler calls
// process.exit(0): that would turn the exit code vitest sets for failed tests into success, so
// `vitest run` (and CI) passed with failing tests. Keep a failure code already set.
const exit = process.exit.bind(process);
process.exit = ((code?: number | string | null) =>
  exit(!code && process.exitCode ? process.exitCode : code)) as typeof process.exit;

/** Starts one real PostgreSQL for the whole test run; each test file makes its own database in it. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dir = await mkdtemp(join(tmpdir(), 'gw-test-pg-'));
  const server = await startEmbeddedPostgres(dir);
  project.provide('postgresAdminUrl', server.adminUrl);
  return async () => {
    await server.stop();
    await rm(dir, { recursive: true, force: true });
  };
}
