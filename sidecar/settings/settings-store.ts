import type pg from 'pg';
import type {
  Settings,
  SettingsChange,
  SettingsChangeHook,
  SettingsRepository,
} from './settings.js';

interface DbRow {
  bootstrap_locked: boolean;
}

const fromDb = (row: DbRow): Settings => ({ bootstrapLocked: row.bootstrap_locked });

/** The settings in PostgreSQL: the one row of `gateway_settings` (migration 0006). */
export class SettingsStore implements SettingsRepository {
  constructor(private readonly pool: pg.Pool) {}

  async read(): Promise<Settings> {
    const { rows } = await this.pool.query<DbRow>('SELECT bootstrap_locked FROM gateway_settings');
    return fromDb(rows[0]!);
  }

  /** Writes `next` and runs `onChange` in one transaction; the row lock orders concurrent PUTs. */
  async update(next: Settings, onChange?: SettingsChangeHook): Promise<SettingsChange> {
    const tx = await this.pool.connect();
    // A connection whose ROLLBACK failed is broken: it is discarded, not reused.
    let broken: Error | undefined;
    try {
      await tx.query('BEGIN');
      const before = await tx.query<DbRow>(
        'SELECT bootstrap_locked FROM gateway_settings FOR UPDATE',
      );
      const after = await tx.query<DbRow>(
        `UPDATE gateway_settings SET bootstrap_locked = $1, updated_at = now()
         RETURNING bootstrap_locked`,
        [next.bootstrapLocked],
      );
      const change = { before: fromDb(before.rows[0]!), after: fromDb(after.rows[0]!) };
      await onChange?.(tx, change);
      await tx.query('COMMIT');
      return change;
    } catch (err) {
      await tx.query('ROLLBACK').catch((rollbackError: Error) => {
        broken = rollbackError;
      });
      throw err;
    } finally {
      tx.release(broken);
    }
  }
}
