import { type Request, type Response, Router } from 'express';
import { errorResult, okResult } from '../envelope.js';
import {
  EndpointMissingError,
  MethodNotAllowedError,
  SessionInvalidError,
  SessionMissingError,
  SessionUnauthenticatedError,
} from '../errors.js';
import type { FieldDef } from '../schema/fields.js';
import { translate } from '../schema/translate.js';
import { parseQuery, parseRecord } from '../schema/validate.js';
import { servedOverHttps } from '../sessions/cookie.js';
import type { EngineState } from '../state.js';
import { bodyOf } from './body.js';
import { gatewayIdentity } from './gateway-identity.js';
import { admit } from './guard.js';
import type { CallContext, RouteSpec } from './route.js';

/** `POST <path>/delete` for every DELETE route, as the protocol's method rules require. */
export function withDeleteAliases(routes: readonly RouteSpec[]): RouteSpec[] {
  return routes.flatMap((route) =>
    route.method === 'DELETE'
      ? [route, { ...route, method: 'POST' as const, path: `${route.path}/delete` }]
      : [route],
  );
}

// One shared empty list, so the per-list schema cache also serves routes without parameters.
const NO_QUERY: readonly FieldDef[] = [];

function highestVersion(state: EngineState) {
  return state.settings.versions[0]!;
}

function isSessionRefusal(err: unknown): boolean {
  return (
    err instanceof SessionMissingError ||
    err instanceof SessionInvalidError ||
    err instanceof SessionUnauthenticatedError
  );
}

async function call(
  route: RouteSpec,
  routes: readonly RouteSpec[],
  state: EngineState,
  req: Request,
  res: Response,
) {
  // Access first: a caller without a session learns nothing about a call's inputs.
  let caller: ReturnType<typeof admit>;
  try {
    caller = admit(req, route.access, state);
  } catch (err) {
    if (!route.probe || !isSessionRefusal(err)) throw err;
    res
      .status(200)
      .set('Cache-Control', 'no-store')
      .json(errorResult(err as SessionMissingError));
    return;
  }
  const raw = bodyOf(req, route.body !== undefined);
  // Before a session exists there is no negotiated version; the newest one validates the input.
  const version = caller.session?.version ?? highestVersion(state);
  const ctx: CallContext = {
    state,
    routes,
    params: req.params as Record<string, string>,
    query: parseQuery(route.query ?? NO_QUERY, req.query as Record<string, unknown>, version),
    body: route.body ? parseRecord(route.body.record, raw, version, route.body.mode) : undefined,
    ...caller,
    gateway: gatewayIdentity(req),
    secure: servedOverHttps(req, state.settings.cookieSecure),
    version,
    setCookie: undefined,
  };
  const result = await route.handler(ctx);
  // Success is always 200 with an OKResult, as real engines answer and clients check.
  res.status(200).set('Cache-Control', 'no-store');
  if (ctx.setCookie !== undefined) res.set('Set-Cookie', ctx.setCookie);
  if (route.result === 'HTML') {
    res.type('html').send(result as string);
    return;
  }
  res.json(okResult(translate(result, ctx.version)));
}

/** A router serving every route of the table, with 405 for known paths and 404 for the rest. */
export function mountRoutes(routes: readonly RouteSpec[], state: EngineState): Router {
  const router = Router({ caseSensitive: true });
  const methodsByPath = new Map<string, string[]>();
  for (const route of routes) {
    const verb = route.method.toLowerCase() as 'get' | 'post' | 'delete';
    router[verb](route.path, (req, res) => call(route, routes, state, req, res));
    const methods = methodsByPath.get(route.path) ?? [];
    methods.push(...(route.method === 'GET' ? ['GET', 'HEAD'] : [route.method]));
    methodsByPath.set(route.path, methods);
  }
  for (const [path, methods] of methodsByPath) {
    router.all(path, (req) => {
      throw new MethodNotAllowedError(req.method, req.path, methods);
    });
  }
  router.use((req) => {
    throw new EndpointMissingError(req.method, req.path);
  });
  return router;
}
