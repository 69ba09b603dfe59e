import { Router } from 'express';
import { recordAuditEvent } from '../audit/audit-log.js';
import { requestContext } from '../audit/request-context.js';
import { ValidationError } from '../errors/api-error.js';
import { isJsonObject, issueDetails, NOT_AN_OBJECT, type Validated } from '../http/body-errors.js';
import { closePaths, mount } from '../http/route-table.js';
import type { Settings, SettingsRepository } from './settings.js';
import { SETTINGS_OPERATIONS as OPS, settingsSchema } from './settings-operations.js';

/**
 * GET and PUT of the gateway settings (the bootstrap lock); the admin check runs before. A
 * change and its audit event (`settings.update`) commit in the settings store's transaction:
 * an event that cannot be written takes the change back with it.
 */
export function settingsRouter(settings: SettingsRepository): Router {
  const router = Router({ strict: false });

  mount(router, OPS.read, async (_req, res) => {
    res.json(toBody(await settings.read()));
  });

  mount(router, OPS.update, async (req, res) => {
    const input = parseSettings(req.body);
    if (!input.ok) throw new ValidationError(input.errors);
    const context = requestContext(req, res);
    const { after } = await settings.update(input.value, (tx, change) =>
      recordAuditEvent(tx, {
        ...context,
        action: 'settings.update',
        outcome: 'success',
        targetId: null,
        details: {
          before: toBody(change.before),
          after: toBody(change.after),
        },
      }),
    );
    res.json(toBody(after));
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
