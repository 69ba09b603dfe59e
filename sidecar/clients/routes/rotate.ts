import type { RequestHandler } from 'express';
import type { AuditedChanges } from '../../audit/audited-change.js';
import { requestContext } from '../../audit/request-context.js';
import type { Clock } from '../../clock.js';
import { ApiError, NotFoundError, ValidationError } from '../../errors/api-error.js';
import { idParam } from '../../http/numeric-id.js';
import { formatApiKey, generateSecret } from '../../keys/api-key.js';
import type { DecisionInvalidator } from '../../nginx/invalidator.js';
import type { ClientStore } from '../store/writes.js';
import { parseRotate } from './rotate-input.js';

/** A client that authenticates by bearer token only has no secret to rotate. */
class NoApiKeyError extends ApiError {
  constructor() {
    super(409, [
      {
        code: 'NO_API_KEY',
        message: 'This API client has no API key to rotate (it authenticates by bearer token).',
      },
    ]);
  }
}

/** What a rotation works with: a part of the API client routes' (router.ts). */
export interface RotateParts {
  store: ClientStore;
  invalidator: DecisionInvalidator;
  /** Runs each change with its audit event in one transaction. */
  changes: AuditedChanges;
  /** Time for grace periods; tests move it. */
  clock?: Clock;
}

/**
 * The handler of `POST /v1/management/api-clients/{id}/rotate` `{"grace_period_seconds": n}`:
 * a new secret at once; the old one stays valid for n seconds (0: refused at once). This gateway's nginx drops
 * what it decided about the client before the answer (the trigger tells the others): the old
 * secret is then asked about afresh and kept no longer than its grace period.
 */
export function rotateHandler({
  store,
  invalidator,
  changes,
  clock = Date.now,
}: RotateParts): RequestHandler {
  return async (req, res) => {
    const id = idParam(req.params.id);
    const input = parseRotate(req.body);
    if (!input.ok) throw new ValidationError(input.errors);
    const grace = input.value.gracePeriodSeconds;
    const graceEndsAt = grace > 0 ? new Date(clock() + grace * 1000) : null;
    const key = generateSecret();
    const context = requestContext(req, res);
    const rotated = await changes.run(
      (db) => store.rotate(id, key.hash, graceEndsAt, db),
      (done) => ({
        ...context,
        action: 'api_client.rotate',
        outcome: done.ok ? 'success' : 'failure',
        targetId: id,
        details: done.ok
          ? {
              grace_period_seconds: grace,
              previous_key_expires_at: graceEndsAt?.toISOString() ?? null,
            }
          : { status: done.conflict === 'missing' ? 404 : 409, conflict: done.conflict },
      }),
    );
    if (!rotated.ok) {
      throw rotated.conflict === 'missing'
        ? new NotFoundError('No API client has this id.')
        : new NoApiKeyError();
    }
    await invalidator.clients([id]);
    res.status(200).json({
      api_key_id: id,
      api_client_entity_id: id,
      token: formatApiKey(id, key.secret),
      previous_key_expires_at: graceEndsAt?.toISOString() ?? null,
    });
  };
}
