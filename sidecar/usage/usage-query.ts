import { z } from 'zod';
import type { ErrorDetail } from '../errors/api-error.js';
import type { Validated } from '../http/body-errors.js';
import { readQuery } from '../http/query-params.js';

/** The steps of a usage series and their length in ms. */
export const USAGE_STEPS = { minute: 60_000, hour: 3_600_000, day: 86_400_000 } as const;
export type UsageStep = keyof typeof USAGE_STEPS;

/** Without `since`, a series covers this much before `until`: a chart's worth of points. */
const DEFAULT_SPAN: Record<UsageStep, number> = {
  minute: 60 * USAGE_STEPS.minute,
  hour: 24 * USAGE_STEPS.hour,
  day: 30 * USAGE_STEPS.day,
};

/** The most points one answer holds (a day of minutes, with room). */
export const MAX_POINTS = 1500;

const time = z.iso.datetime({ offset: true }).optional();

/** The usage endpoint's query parameters: validation and the document read this one schema. */
export const usageQuerySchema = z.strictObject({
  since: time.meta({
    description:
      'Start, RFC 3339; rounded down to a whole step (UTC). Default: 60 minutes, 24 hours or 30 days before `until`.',
  }),
  until: time.meta({ description: 'End (exclusive), RFC 3339. Default: now.' }),
  step: z
    .enum(['minute', 'hour', 'day'])
    .optional()
    .meta({ description: 'One point per minute, hour or day (UTC); default hour.' }),
});

export interface UsageQuery {
  step: UsageStep;
  /** Aligned to a whole step. */
  since: Date;
  until: Date;
}

/** `since`, `until`, `step` at `now` (ms): every problem at once, a series of at most MAX_POINTS. */
export function parseUsageQuery(
  query: Record<string, unknown>,
  now: number,
): Validated<UsageQuery> {
  const read = readQuery(usageQuerySchema, query, {
    since: 'since must be an RFC 3339 time with an offset.',
    until: 'until must be an RFC 3339 time with an offset.',
    step: 'step must be one of minute, hour, day.',
  });
  if (!read.ok) return read;
  const step = read.value.step ?? 'hour';
  const size = USAGE_STEPS[step];
  const until = read.value.until !== undefined ? Date.parse(read.value.until) : now;
  const rawSince =
    read.value.since !== undefined ? Date.parse(read.value.since) : until - DEFAULT_SPAN[step];
  const since = Math.floor(rawSince / size) * size;
  const errors: ErrorDetail[] = [];
  if (since >= until) {
    errors.push({ code: 'INVALID_FIELD', field: 'since', message: 'since must lie before until.' });
  } else if (Math.ceil((until - since) / size) > MAX_POINTS) {
    errors.push({
      code: 'INVALID_FIELD',
      field: 'since',
      message: `The range holds more than ${MAX_POINTS} steps of a ${step}: choose a larger step or a shorter range.`,
    });
  }
  if (errors.length > 0) return { ok: false, errors };
  return { ok: true, value: { step, since: new Date(since), until: new Date(until) } };
}
