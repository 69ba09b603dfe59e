import type { RecordDef } from './fields.js';
import { USER, USER_LIST } from './user-records.js';

// The API's history lives here and in user-records.ts: every field says which versions know it.

const LOCALE = /^[a-z]{2,3}_[A-Z]{2}$/;

export const API_VERSION: RecordDef = {
  type: 'APIVersion',
  description: 'A version of the API: major changes are incompatible, minor ones add fields.',
  fields: [
    {
      name: 'major',
      type: { kind: 'integer', min: 0, max: 999_999 },
      direction: 'both',
      required: true,
      description: 'Major version.',
    },
    {
      name: 'minor',
      type: { kind: 'integer', min: 0, max: 999_999 },
      direction: 'both',
      required: true,
      description: 'Minor version.',
    },
    {
      name: 'micro',
      type: { kind: 'integer', min: 0, max: 999_999 },
      direction: 'both',
      required: true,
      description: 'Micro version; never changes fields.',
    },
  ],
};

export const API_SESSION: RecordDef = {
  type: 'APISession',
  description: 'A session: the requested version on the way in, the native version on the way out.',
  fields: [
    {
      name: 'version',
      type: { kind: 'record', record: 'APIVersion' },
      direction: 'both',
      required: true,
      description: 'Requested version in the request; native version of that major in the result.',
    },
    {
      name: 'locale',
      type: {
        kind: 'string',
        maxLength: 6,
        pattern: LOCALE,
        hint: '<language>_<COUNTRY>, e.g. en_US',
      },
      direction: 'both',
      description: 'Locale, <language>_<COUNTRY>; the engine default when absent.',
    },
    {
      name: 'client',
      type: { kind: 'any' },
      direction: 'both',
      nullable: true,
      description: 'Free for the client in the request; always null in the result.',
    },
  ],
};

export const LOGIN_REQUEST: RecordDef = {
  type: 'LoginRequest',
  description: 'Password login of a system or domain user in the current session.',
  fields: [
    {
      name: 'username',
      type: { kind: 'string', minLength: 1, maxLength: 256 },
      direction: 'in',
      required: true,
      description: 'System user or domain user.',
    },
    {
      name: 'password',
      type: { kind: 'string', minLength: 1, maxLength: 1024 },
      direction: 'in',
      required: true,
      description: 'Password.',
    },
    {
      name: 'target',
      type: { kind: 'enum', values: ['SYSTEM', 'DOMAIN'] },
      direction: 'in',
      default: 'SYSTEM',
      description: 'SYSTEM for system users (default), DOMAIN for domain users.',
    },
  ],
};

export const LOGIN_RESULT: RecordDef = {
  type: 'LoginResult',
  description: 'The outcome of a successful login.',
  fields: [
    {
      name: 'user',
      type: { kind: 'record', record: 'User' },
      direction: 'out',
      description: 'The user now logged in.',
    },
  ],
};

export const GATEWAY_IDENTITY: RecordDef = {
  type: 'GatewayIdentity',
  description: 'The API client the gateway authenticated, from its X-Client-* headers.',
  fields: [
    {
      name: 'clientId',
      type: { kind: 'string', maxLength: 256 },
      direction: 'out',
      description: 'X-Client-Id.',
    },
    {
      name: 'clientName',
      type: { kind: 'string', maxLength: 1024 },
      direction: 'out',
      description: 'X-Client-Name, percent-decoded.',
    },
    {
      name: 'isAdmin',
      type: { kind: 'boolean' },
      direction: 'out',
      description: 'X-Client-Is-Admin.',
    },
  ],
};

export const IDENTITY: RecordDef = {
  type: 'Identity',
  description: 'Who is calling: the logged-in user and, behind the gateway, the API client.',
  fields: [
    {
      name: 'user',
      type: { kind: 'record', record: 'User' },
      direction: 'out',
      description: 'The logged-in user.',
    },
    {
      name: 'gateway',
      type: { kind: 'record', record: 'GatewayIdentity' },
      direction: 'out',
      nullable: true,
      description: 'The gateway identity, or null when no gateway headers arrived.',
    },
  ],
};

/** Every record, by its `type`; results are translated by looking their `type` up here. */
export const RECORDS: ReadonlyMap<string, RecordDef> = new Map(
  [
    API_VERSION,
    API_SESSION,
    LOGIN_REQUEST,
    LOGIN_RESULT,
    USER,
    USER_LIST,
    GATEWAY_IDENTITY,
    IDENTITY,
  ].map((r) => [r.type, r]),
);

/** The record named `type`; a programming error when it is missing. */
export function recordNamed(type: string): RecordDef {
  const record = RECORDS.get(type);
  if (!record) throw new Error(`no record type ${type}`);
  return record;
}
