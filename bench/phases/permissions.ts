import { type Aggregate, alternate } from './aggregate.js';
import { benchClient } from './bench-client.js';
import { apkTarget, type PhaseContext } from './context.js';

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
  const target = (name: string) => apkTarget(name, b.url, client.token);
  const ten = target('fast 10 rules');
  const [restricted, unrestricted] = await alternate(ctx, [ten, target('fast no rules')], (t) =>
    client.put({ permissions: t === ten ? TEN_RULES : null }),
  );
  await client.put({ permissions: null });
  const errors = restricted.errors + unrestricted.errors;
  if (errors > 0) throw new Error(`${errors} errors (a rule refused the bench's call?)`);
  return { restricted, unrestricted };
}
