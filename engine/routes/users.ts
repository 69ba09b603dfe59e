import { InvalidRequestError } from '../errors.js';
import type { CallContext, RouteSpec } from '../http/route.js';
import type { FieldDef } from '../schema/fields.js';
import { USER } from '../schema/user-records.js';
import type { LoginTarget } from '../users/store.js';
import { userChanges, userRecord } from '../users/wire.js';

// Under the session namespace and singular, as real engines name it (`.../delphix/user`).
const COLLECTION = '/resources/json/service/user';
const OBJECT = `${COLLECTION}/:name`;
/** `user/current` names the caller, so no user may be called that. */
const CURRENT = 'current';

const LIST_QUERY: readonly FieldDef[] = [
  {
    name: 'target',
    type: { kind: 'enum', values: ['SYSTEM', 'DOMAIN'] },
    direction: 'in',
    description: 'Only users of this target.',
  },
  {
    name: 'offset',
    type: { kind: 'integer', min: 0, max: 1_000_000_000 },
    direction: 'in',
    default: 0,
    description: 'Number of users to skip.',
  },
  {
    name: 'limit',
    type: { kind: 'integer', min: 1, max: 500 },
    direction: 'in',
    default: 100,
    description: 'Page size, at most 500.',
  },
];

function list(ctx: CallContext) {
  const { target, offset, limit } = ctx.query as {
    target?: LoginTarget;
    offset: number;
    limit: number;
  };
  const all = ctx.state.users.list(target);
  return {
    type: 'UserList',
    items: all.slice(offset, offset + limit).map(userRecord),
    total: all.length,
    offset,
    limit,
  };
}

async function create(ctx: CallContext) {
  const body = ctx.body!;
  if (body.name === CURRENT) {
    throw new InvalidRequestError('The user name "current" is reserved.', [
      { type: 'Diagnosis', field: 'name', message: 'reserved: user/current names the caller' },
    ]);
  }
  const changes = userChanges(body, ctx.version);
  const user = await ctx.state.users.create(body.name as string, {
    ...changes,
    password: body.password as string,
  });
  return userRecord(user);
}

async function update(ctx: CallContext) {
  const body = ctx.body!;
  const name = ctx.params.name!;
  if (body.name !== undefined && body.name !== name) {
    throw new InvalidRequestError('A user cannot be renamed.', [
      { type: 'Diagnosis', field: 'name', message: `must be "${name}", as in the URL, or absent` },
    ]);
  }
  return userRecord(await ctx.state.users.update(name, userChanges(body, ctx.version)));
}

/** The engine's users: the object that carries the general method rules. */
export const userRoutes: readonly RouteSpec[] = [
  {
    method: 'GET',
    path: COLLECTION,
    summary: 'Lists users, ordered by name, one page at a time.',
    access: 'user',
    query: LIST_QUERY,
    result: 'UserList',
    handler: list,
  },
  {
    method: 'POST',
    path: COLLECTION,
    summary:
      'Creates a user (administrators only) and returns it; absent fields get their defaults. The name "current" is reserved.',
    access: 'admin',
    body: { record: USER, mode: 'create' },
    result: 'User',
    handler: create,
  },
  {
    method: 'GET',
    path: `${COLLECTION}/${CURRENT}`,
    summary: 'Returns the logged-in user: what clients read right after login.',
    access: 'user',
    result: 'User',
    handler: (ctx) => userRecord(ctx.user!),
  },
  {
    method: 'GET',
    path: OBJECT,
    summary: 'Reads one user.',
    access: 'user',
    result: 'User',
    handler: (ctx) => userRecord(ctx.state.users.get(ctx.params.name!)),
  },
  {
    method: 'POST',
    path: OBJECT,
    summary:
      'Updates a user (administrators only): only the fields sent change, so a client of an older version never resets fields it does not know.',
    access: 'admin',
    body: { record: USER, mode: 'update' },
    result: 'User',
    handler: update,
  },
  {
    method: 'DELETE',
    path: OBJECT,
    summary:
      'Deletes a user (administrators only) and returns it; their sessions end. The last enabled administrator cannot be deleted.',
    access: 'admin',
    result: 'User',
    handler: (ctx) => userRecord(ctx.state.users.delete(ctx.params.name!)),
  },
];
