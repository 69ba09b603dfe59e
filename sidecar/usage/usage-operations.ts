import { z } from 'zod';
import { clientIdParams } from '../http/numeric-id.js';
import type { Operation } from '../http/operation.js';
import { usageQuerySchema } from './usage-query.js';

const count = z.int().min(0);

/** A usage series as answered (usage-routes.ts). */
export const usageSeriesSchema = z
  .strictObject({
    id: z.int().min(1).meta({ description: 'The client id.' }),
    step: z.enum(['minute', 'hour', 'day']),
    since: z.iso.datetime().meta({ description: 'Start of the first point (UTC).' }),
    until: z.iso.datetime().meta({ description: 'End of the series, exclusive (UTC).' }),
    points: z.array(
      z.strictObject({
        start: z.iso.datetime().meta({ description: 'Start of the step (UTC).' }),
        allowed: count.meta({ description: 'Requests let through.' }),
        limited: count.meta({ description: 'Requests refused by the rate limit (429).' }),
        failed: count.meta({ description: 'Failed authentications naming the client.' }),
      }),
    ),
  })
  .meta({
    id: 'ApiClientUsage',
    description:
      'Requests per step, from every gateway pair. Counted by nginx and written by the sidecars every few seconds, so the last seconds may still be missing.',
  });

/** The usage route. */
export const USAGE_OPERATIONS = {
  usage: {
    method: 'get',
    path: '/v1/management/api-clients/{id}/usage',
    operationId: 'getApiClientUsage',
    tag: 'API clients',
    summary: "A client's usage over time",
    description:
      'One point per step, zero where nothing was counted; at most 1500 points. Kept for the usage retention (`USAGE_RETENTION_DAYS`, default 30 days).',
    params: clientIdParams,
    query: usageQuerySchema,
    success: { 200: { description: 'The series.', schema: usageSeriesSchema } },
    errors: [400, 404],
  },
} satisfies Record<string, Operation>;
