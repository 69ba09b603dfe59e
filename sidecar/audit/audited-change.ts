import type pg from 'pg';
import type { Queryable } from '../db/queryable.js';
import { inTransaction } from '../db/transaction.js';
import { inChildSpan } from '../tracing/tracer.js';
import { type AuditEventInput, recordAuditEvent } from './audit-log.js';

const DB = { 'db.system.name': 'postgresql' } as const;

/** The event's write, as a span of its own while the request is traced (action and outcome only). */
function recordTraced(db: Queryable, event: AuditEventInput): Promise<void> {
  return inChildSpan(
    'audit event',
    { ...DB, 'gateway.audit.action': event.action, 'gateway.audit.outcome': event.outcome },
    () => recordAuditEvent(db, event),
  );
}

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
    // Spans while the management request is traced (no-ops otherwise): the transaction, the
    // change made in it, and the audit event.
    const outcome = await inChildSpan('db transaction', DB, () =>
      inTransaction(
        this.pool,
        async (tx) => {
          const done = await inChildSpan('db change', DB, () => work(tx));
          if (done.ok) await recordTraced(tx, event(done));
          return done;
        },
        (done) => done.ok,
      ),
    );
    if (!outcome.ok) await recordTraced(this.pool, event(outcome));
    return outcome;
  }
}
