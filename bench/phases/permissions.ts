import { BENCH_PATH } from '../stack/engine-session.js';
import { MAX_RATE } from '../wrk/lua.js';
import { errorCount } from '../wrk/run.js';
import { type Aggregate, aggregate } from './aggregate.js';
import { benchClient } from './bench-client.js';
import { type MeasuredRun, measure, type PhaseContext, type Target } from './context.js';

export interface PermissionsResult {
  /** The same client on gateway B with 10 rules (the last one allowing the call), and none. */
  restricted: Aggregate;
  unrestricted: Aggregate;
}

/**
 * Ten rules, the one that allows the bench's call last: every request is matched against all
 * ten (nine miss, on their method or their path), the costliest order for a client that passes.
 */
export const TEN_RULES = [
  { methods: ['POST'], path: '/resources/json/service/session' },
  { methods: ['GET'], path: '/resources/json/service/user/*' },
  { methods: ['GET'], path: '/resources/json/service/database/**' },
  { methods: ['GET', 'POST'], path: '/resources/json/delphix/**' },
  { methods: ['DELETE'], path: '/resources/json/service/*' },
  { methods: ['PUT', 'PATCH'], path: '/resources/json/service/*/**' },
  { methods: ['GET'], path: '/api' },
  { methods: ['GET'], path: '/resources/*/service/about' },
  { methods: ['OPTIONS'], path: '/**' },
  { methods: ['GET'], path: '/resources/json/service/**' },
];

/**
 * Issue 39's row on gateway B (static upstream): the hot-path cost of permissions, as one
 * client with 10 rules against the same client with none (alternating rounds, the rules set
 * and removed by PUT through A between them and learnt by B through LISTEN). Both are the
 * nginx module's hits: it checks a client's rules itself (docs/decisions/20261128-permissions.md).
 */
export async function measurePermissions(ctx: PhaseContext): Promise<PermissionsResult> {
  const { b } = ctx.stack;
  const client = await benchClient(ctx, 'bench-permissions');
  const setRules = (rules: typeof TEN_RULES | null) => client.put({ permissions: rules });
  const target = (name: string): Target => ({
    name,
    url: `${b.url}${BENCH_PATH}`,
    headers: { Host: 'localhost', Authorization: `apk ${client.token}` },
    authenticatedByA: false,
  });
  const restrictedTarget = target('fast 10 rules');
  const unrestrictedTarget = target('fast no rules');
  const runs = { restricted: [] as MeasuredRun[], unrestricted: [] as MeasuredRun[] };
  const one = async (restricted: boolean, seconds: number) => {
    await setRules(restricted ? TEN_RULES : null);
    const run = await measure(
      ctx,
      restricted ? restrictedTarget : unrestrictedTarget,
      seconds,
      MAX_RATE,
    );
    const errors = errorCount(run);
    if (errors > 0) throw new Error(`${errors} errors (a rule refused the bench's call?)`);
    ctx.say(
      `  ${restricted ? '10 rules' : 'no rules'} ${Math.round(run.rps)} req/s, p99 ${run.p99.toFixed(2)} ms`,
    );
    return run;
  };
  if (!ctx.options.quick) {
    await one(true, ctx.options.warmupSeconds);
    await one(false, ctx.options.warmupSeconds);
  }
  for (let round = 0; round < ctx.options.rounds; round += 1) {
    for (const restricted of round % 2 === 0 ? [true, false] : [false, true]) {
      (restricted ? runs.restricted : runs.unrestricted).push(
        await one(restricted, ctx.options.seconds),
      );
    }
  }
  await setRules(null);
  return {
    restricted: aggregate(restrictedTarget.name, runs.restricted),
    unrestricted: aggregate(unrestrictedTarget.name, runs.unrestricted),
  };
}
