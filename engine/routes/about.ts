import type { RouteSpec } from '../http/route.js';

/** What the engine is: the call real clients make right after login to learn its API version. */
export const aboutRoutes: readonly RouteSpec[] = [
  {
    method: 'GET',
    path: '/resources/json/service/about',
    summary:
      'Returns the product name and the API versions the engine speaks. Needs a logged-in session, like every call but the login.',
    access: 'user',
    result: 'PublicSystemInfo',
    handler: (ctx) => {
      const versions = ctx.state.settings.versions.map((v) => ({ type: 'APIVersion', ...v }));
      return {
        type: 'PublicSystemInfo',
        productName: 'Data engine',
        apiVersion: versions[0],
        apiVersions: versions,
      };
    },
  },
];
