import { z } from 'zod';
import type { Validated } from './body-errors.js';

/** The longest grace period a rotation may give the old secret: 7 days. */
export const MAX_GRACE_PERIOD_SECONDS = 604_800;

const rotateSchema = z.strictObject({
  grace_period_seconds: z
    .number({ error: `must be an integer from 0 to ${MAX_GRACE_PERIOD_SECONDS}` })
    .int(`must be an integer from 0 to ${MAX_GRACE_PERIOD_SECONDS}`)
    .min(0, `must be an integer from 0 to ${MAX_GRACE_PERIOD_SECONDS}`)
    .max(MAX_GRACE_PERIOD_SECONDS, `must be an integer from 0 to ${MAX_GRACE_PERIOD_SECONDS}`),
});

/** Validates a rotation body `{"grace_period_seconds": n}`, every problem at once. */
export function parseRotate(body: unknown): Validated<{ gracePeriodSeconds: number }> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return {
      ok: false,
      errors: [{ code: 'INVALID_BODY', message: 'The request body must be a JSON object.' }],
    };
  }
  const result = rotateSchema.safeParse(body);
  if (result.success) {
    return { ok: true, value: { gracePeriodSeconds: result.data.grace_period_seconds } };
  }
  const raw = body as Record<string, unknown>;
  return {
    ok: false,
    errors: result.error.issues.flatMap((issue) => {
      if (issue.code === 'unrecognized_keys') {
        return issue.keys.map((key) => ({
          code: 'UNKNOWN_FIELD',
          field: key,
          message: `${key} is not a field of a rotation.`,
        }));
      }
      const field = issue.path.join('.');
      return raw[field] === undefined
        ? [{ code: 'MISSING_FIELD', field, message: `${field} is required.` }]
        : [{ code: 'INVALID_FIELD', field, message: `${field} ${issue.message}.` }];
    }),
  };
}
