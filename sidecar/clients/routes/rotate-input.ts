import { z } from 'zod';
import {
  isJsonObject,
  issueDetails,
  NOT_AN_OBJECT,
  type Validated,
} from '../../http/body-errors.js';

/** The longest grace period a rotation may give the old secret: 7 days. */
export const MAX_GRACE_PERIOD_SECONDS = 604_800;

const GRACE = `must be an integer from 0 to ${MAX_GRACE_PERIOD_SECONDS}`;

/** A rotation body (POST .../rotate); also its description in the OpenAPI document. */
export const rotateApiClientSchema = z
  .strictObject({
    grace_period_seconds: z
      .number({ error: GRACE })
      .int(GRACE)
      .min(0, GRACE)
      .max(MAX_GRACE_PERIOD_SECONDS, GRACE)
      .meta({
        description:
          'How long the old secret stays valid, in seconds (at most 7 days); 0 refuses it at once.',
      }),
  })
  .meta({ id: 'ApiClientRotate', description: 'A key rotation.' });

/** Validates a rotation body `{"grace_period_seconds": n}`, every problem at once. */
export function parseRotate(body: unknown): Validated<{ gracePeriodSeconds: number }> {
  if (!isJsonObject(body)) return NOT_AN_OBJECT;
  const result = rotateApiClientSchema.safeParse(body);
  if (result.success) {
    return { ok: true, value: { gracePeriodSeconds: result.data.grace_period_seconds } };
  }
  return {
    ok: false,
    errors: result.error.issues.flatMap((i) => issueDetails(i, body, 'a rotation')),
  };
}
