import { type Request, Router } from 'express';
import type pg from 'pg';
import type { Identity } from '../clients/api-client.js';
import { ValidationError } from '../errors/api-error.js';
import type { Settings, SettingsChange, SettingsRepository } from '../settings/settings.js';
import { isJsonObject, issueDetails, NOT_AN_OBJECT, type Validated } from './body-errors.js';
import { closePaths, mount } from './openapi/route-table.js';
import { SETTINGS_OPERATIONS as OPS, settingsSchema } from './settings-operations.js';

/**
 * Called in the settings update's transaction with who asked and how: the seam where the audit
 * trail records `settings.update` (its writes through `tx` commit with the change or not at all).
 */
export type SettingsAudit = (
  tx: pg.ClientBase,
  change: SettingsChange,
  caller: { identity: Identity; req: Request },
) => Promise<void>;

export const NO_SETTINGS_AUDIT: SettingsAudit = async () => {};

/** GET and PUT of the gateway settings (the bootstrap lock); the admin check runs before. */
export function settingsRouter(settings: SettingsRepository, audit: SettingsAudit): Router {
  const router = Router({ strict: false });

  mount(router, OPS.read, async (_req, res) => {
    res.set('Cache-Control', 'no-store').json(toBody(await settings.read()));
  });

  mount(router, OPS.update, async (req, res) => {
    const input = parseSettings(req.body);
    if (!input.ok) throw new ValidationError(input.errors);
    const identity = res.locals.identity as Identity;
    const { after } = await settings.update(input.value, (tx, change) =>
      audit(tx, change, { identity, req }),
    );
    res.set('Cache-Control', 'no-store').json(toBody(after));
  });

  closePaths(router, Object.values(OPS));
  return router;
}

/** A PUT body: exactly `{"bootstrap_locked": boolean}`; every problem at once. */
export function parseSettings(body: unknown): Validated<Settings> {
  if (!isJsonObject(body)) return NOT_AN_OBJECT;
  const result = settingsSchema.safeParse(body);
  if (!result.success) {
    return {
      ok: false,
      errors: result.error.issues.flatMap((i) => issueDetails(i, body, 'the settings')),
    };
  }
  return { ok: true, value: { bootstrapLocked: result.data.bootstrap_locked } };
}

function toBody(settings: Settings) {
  return { bootstrap_locked: settings.bootstrapLocked };
}
