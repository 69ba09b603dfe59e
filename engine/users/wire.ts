import type { FieldDef } from '../schema/fields.js';
import { knows } from '../schema/fields.js';
import { USER } from '../schema/user-records.js';
import type { ApiVersion } from '../versions.js';
import type { LoginTarget, StoredUser, UserChanges } from './store.js';

/** A user as a `User` record with every field of every version; translation trims it per session. */
export function userRecord(user: StoredUser): Record<string, unknown> {
  return {
    type: 'User',
    name: user.name,
    target: user.target,
    fullName: user.fullName,
    admin: user.admin,
    email: user.email,
    lastLogin: user.lastLogin,
    role: user.admin ? 'ADMINISTRATOR' : 'USER',
    enabled: user.enabled,
  };
}

const ROLE = USER.fields.find((f) => f.name === 'role') as FieldDef;

/** Turns a validated `User` input into store changes, reading admin or role by version. */
export function userChanges(input: Record<string, unknown>, version: ApiVersion): UserChanges {
  const admin = knows(ROLE, version)
    ? input.role === undefined
      ? undefined
      : input.role === 'ADMINISTRATOR'
    : (input.admin as boolean | undefined);
  return {
    target: input.target as LoginTarget | undefined,
    password: input.password as string | undefined,
    fullName: input.fullName as string | undefined,
    email: input.email as string | undefined,
    admin,
    enabled: input.enabled as boolean | undefined,
  };
}
