import type pg from 'pg';
import type { Queryable } from '../db/queryable.js';
import { inTransaction } from '../db/transaction.js';
import { type AuditEventInput, recordAuditEvent } from './audit-log.js';

/** A change's outcome as the stores report it: done, or refused (no such client, a conflict). */
export interface ChangeOutcome {
  ok: boolean;
}

/** Runs a change and records its audit event: both or neither (issue 12). */
export interface AuditedChanges {
  run<O extends ChangeOutcome>(
    work: (db: Queryable) => Promise<O>,
    event: (outcome: O) => AuditEventInput,
  ): Promise<O>;
}

/**
 * PostgreSQL: the change and its event in one transaction, committed together. A refused
 * change (404, 409) rolls back (a collision has aborted the transaction anyway) and its
 * failure event is written afterwards, outside any transaction.
 */
export class TransactionalChanges implements AuditedChanges {
  constructor(private readonly pool: pg.Pool) {}

  async run<O extends ChangeOutcome>(
    work: (db: Queryable) => Promise<O>,
    event: (outcome: O) => AuditEventInput,
  ): Promise<O> {
    const outcome = await inTransaction(
      this.pool,
      async (tx) => {
        const done = await work(tx);
        if (done.ok) await recordAuditEvent(tx, event(done));
        return done;
      },
      (done) => done.ok,
    );
    if (!outcome.ok) await recordAuditEvent(this.pool, event(outcome));
    return outcome;
  }
}
