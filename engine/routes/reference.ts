import type { RouteSpec } from '../http/route.js';
import { renderReference } from '../reference/render.js';

/** The human-readable API reference. */
export const referenceRoutes: readonly RouteSpec[] = [
  {
    method: 'GET',
    path: '/api',
    summary: 'This page: every call, its inputs and the versions that know each field.',
    access: 'none',
    result: 'HTML',
    handler: (ctx) => renderReference(ctx.routes, ctx.state.settings),
  },
];
