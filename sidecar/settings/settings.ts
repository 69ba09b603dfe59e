import type pg from 'pg';

/** The gateway-wide settings an admin changes at run time. */
export interface Settings {
  /** API_KEY_CREATE=true mints no key while an admin client exists. */
  bootstrapLocked: boolean;
}

/** What an update changed (before and after may be equal: a PUT of the same value). */
export interface SettingsChange {
  before: Settings;
  after: Settings;
}

/**
 * Runs inside the update's transaction, after the change: whatever it writes with `tx`
 * commits or rolls back with the change (the seam for the audit event `settings.update`).
 */
export type SettingsChangeHook = (tx: pg.ClientBase, change: SettingsChange) => Promise<void>;

/** Reads and changes the settings; database faults propagate as exceptions. */
export interface SettingsRepository {
  read(): Promise<Settings>;
  update(next: Settings, onChange?: SettingsChangeHook): Promise<SettingsChange>;
}
