import { z } from 'zod';
import type { Operation } from '../http/operation.js';

export const SETTINGS_PATH = '/v1/management/settings';

/** The settings, as sent in a PUT and answered by GET and PUT. */
export const settingsSchema = z
  .strictObject({
    bootstrap_locked: z.boolean({ error: 'must be true or false' }).meta({
      description:
        'true: API_KEY_CREATE=true mints no key while an admin client exists (logged at ' +
        'start-up). With no admin client at all it still mints one, so the gateway stays ' +
        'recoverable. Default false.',
    }),
  })
  .meta({ id: 'Settings', description: 'The gateway-wide settings.' });

/** The settings routes (settings-routes.ts mounts its handlers on these). */
export const SETTINGS_OPERATIONS = {
  read: {
    method: 'get',
    path: SETTINGS_PATH,
    operationId: 'getSettings',
    tag: 'Settings',
    summary: 'Read the gateway settings',
    success: { 200: { description: 'The settings.', schema: settingsSchema } },
    errors: [],
  },
  update: {
    method: 'put',
    path: SETTINGS_PATH,
    operationId: 'updateSettings',
    tag: 'Settings',
    summary: 'Change the gateway settings',
    description: 'Every setting is sent (a full replacement); unknown fields are refused.',
    body: settingsSchema,
    success: { 200: { description: 'The settings now in force.', schema: settingsSchema } },
    errors: [],
  },
} satisfies Record<string, Operation>;
