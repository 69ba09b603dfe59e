import { withDeleteAliases } from '../http/mount.js';
import type { RouteSpec } from '../http/route.js';
import { aboutRoutes } from './about.js';
import { loginRoutes } from './login.js';
import { referenceRoutes } from './reference.js';
import { sessionRoutes } from './session.js';
import { userRoutes } from './users.js';

/** Every route the engine serves, delete aliases included: routing and /api both read this. */
export const ROUTES: readonly RouteSpec[] = withDeleteAliases([
  ...sessionRoutes,
  ...loginRoutes,
  ...aboutRoutes,
  ...userRoutes,
  ...referenceRoutes,
]);
