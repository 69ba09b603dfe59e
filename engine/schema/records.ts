import type { RecordDef } from './fields.js';
import { USER, USER_LIST } from './user-records.js';

// The API's history lives here and in user-records.ts: every field says which versions know it.

// Requests may name the locale as the protocol spells it (en_US) or as a BCP 47 tag (en-US, which
// the Delphix SDKs send); results always spell it <language>_<COUNTRY>.
const LOCALE = /^[A-Za-z]{2,3}[_-][A-Za-z]{2}$/;

/** `en-us` or `en_US` as the protocol spells a locale in results: `en_US`. */
export function normaliseLocale(locale: string): string {
  const [language = '', country = ''] = locale.split(/[_-]/);
  return `${language.toLowerCase()}_${country.toUpperCase()}`;
}

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
        hint: '<language>_<COUNTRY> or <language>-<COUNTRY>, e.g. en_US or en-US',
      },
      direction: 'both',
      description:
        'Locale: en_US, or the BCP 47 tag en-US; results spell it <language>_<COUNTRY>. The engine default when absent.',
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
    {
      name: 'keepAliveMode',
      type: { kind: 'enum', values: ['ALL_REQUESTS', 'KEEP_ALIVE_HEADER_ONLY'] },
      direction: 'in',
      default: 'ALL_REQUESTS',
      description:
        'ALL_REQUESTS: every call keeps the session from expiring (default); KEEP_ALIVE_HEADER_ONLY: only calls with the header KeepSessionAlive: true do.',
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

export const PUBLIC_SYSTEM_INFO: RecordDef = {
  type: 'PublicSystemInfo',
  description: 'What the engine is and which API versions it speaks (GET about).',
  fields: [
    {
      name: 'productName',
      type: { kind: 'string', maxLength: 100 },
      direction: 'out',
      description: 'Name of the product.',
    },
    {
      name: 'apiVersion',
      type: { kind: 'record', record: 'APIVersion' },
      direction: 'out',
      description: 'The newest API version the engine speaks (its highest native version).',
    },
    {
      name: 'apiVersions',
      type: { kind: 'list', of: 'APIVersion' },
      direction: 'out',
      description: 'The native version of every supported major, newest first.',
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
    PUBLIC_SYSTEM_INFO,
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
