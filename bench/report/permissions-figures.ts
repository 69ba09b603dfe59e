import type { PermissionsResult } from '../phases/permissions.js';
import { round } from '../stats.js';
import { invalid, notMeasured, otherOf, type RawFigure } from './figure.js';
import type { Outcome } from './miss-path-figures.js';

/** Issue 39's target: a client with 10 rules keeps at least 97 % of a client without. */
const COST_RATIO_MIN = 0.97;

const COST = 'fast: API key with 10 rules (the last allowing the call) vs none';

/** Issue 39's row, on gateway B with the static responder behind it. */
export function permissionsFigure(result: Outcome<PermissionsResult>): RawFigure {
  if ('error' in result) {
    return notMeasured(
      'fast_permissions_cost',
      COST,
      'ratio',
      `>= ${COST_RATIO_MIN}`,
      result.error,
    );
  }
  const { restricted, unrestricted } = result;
  const ratio = restricted.rps / unrestricted.rps;
  const perRound = (runs: { rps: number }[]) => runs.map((r) => Math.round(r.rps)).join('/');
  return {
    id: 'fast_permissions_cost',
    other: otherOf(restricted, unrestricted),
    figure: COST,
    measured: round(ratio, 3),
    unit: 'ratio',
    target: `>= ${COST_RATIO_MIN}`,
    pass: restricted.errors + unrestricted.errors === 0 && ratio >= COST_RATIO_MIN,
    rps: restricted.rps,
    p50: restricted.p50,
    p99: restricted.p99,
    ratio: round(ratio, 3),
    note:
      `${invalid(restricted.errors + unrestricted.errors)}the same client, its rules set and ` +
      `removed by PUT between rounds: with ${Math.round(restricted.rps)} req/s ` +
      `(${perRound(restricted.runs)}), without ${Math.round(unrestricted.rps)} ` +
      `req/s (${perRound(unrestricted.runs)}); both the nginx module's hits`,
  };
}
