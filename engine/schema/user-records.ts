import type { RecordDef } from './fields.js';

// Major 1 had a boolean `admin`; major 2 replaced it with `role`: the incompatible change that
// made major 2. Minor releases only ever add fields.

const NAME = /^[A-Za-z0-9][A-Za-z0-9._@-]*$/;

export const USER: RecordDef = {
  type: 'User',
  description: 'A user of the engine: a system user or a domain user.',
  fields: [
    {
      name: 'name',
      type: {
        kind: 'string',
        minLength: 1,
        maxLength: 64,
        pattern: NAME,
        hint: 'letters, digits, . _ @ -',
      },
      direction: 'both',
      required: true,
      description: 'Unique user name, across both targets.',
    },
    {
      name: 'target',
      type: { kind: 'enum', values: ['SYSTEM', 'DOMAIN'] },
      direction: 'both',
      default: 'SYSTEM',
      description: 'SYSTEM or DOMAIN; a login must name the same target.',
    },
    {
      name: 'password',
      type: { kind: 'string', minLength: 8, maxLength: 1024 },
      direction: 'in',
      required: true,
      description: 'Password; stored as an scrypt hash, never returned.',
    },
    {
      name: 'fullName',
      type: { kind: 'string', maxLength: 200 },
      direction: 'both',
      default: '',
      description: 'Display name.',
    },
    {
      name: 'admin',
      type: { kind: 'boolean' },
      direction: 'both',
      default: false,
      removedIn: 2,
      description: 'Whether the user administers the engine (major 1; see role).',
    },
    {
      name: 'email',
      type: { kind: 'string', maxLength: 254 },
      direction: 'both',
      default: '',
      since: { major: 1, minor: 1 },
      description: 'E-mail address.',
    },
    {
      name: 'lastLogin',
      type: { kind: 'timestamp' },
      direction: 'out',
      nullable: true,
      since: { major: 1, minor: 2 },
      description: 'Time of the last successful login, ISO 8601, or null.',
    },
    {
      name: 'role',
      type: { kind: 'enum', values: ['ADMINISTRATOR', 'USER'] },
      direction: 'both',
      default: 'USER',
      since: { major: 2, minor: 0 },
      description: 'ADMINISTRATOR or USER (replaces admin).',
    },
    {
      name: 'enabled',
      type: { kind: 'boolean' },
      direction: 'both',
      default: true,
      since: { major: 2, minor: 1 },
      description: 'A disabled user cannot log in.',
    },
  ],
};

export const USER_LIST: RecordDef = {
  type: 'UserList',
  description: 'One page of users, ordered by name.',
  fields: [
    {
      name: 'items',
      type: { kind: 'list', of: 'User' },
      direction: 'out',
      description: 'The users of this page.',
    },
    {
      name: 'total',
      type: { kind: 'integer', min: 0, max: Number.MAX_SAFE_INTEGER },
      direction: 'out',
      description: 'Number of users matching the filter.',
    },
    {
      name: 'offset',
      type: { kind: 'integer', min: 0, max: Number.MAX_SAFE_INTEGER },
      direction: 'out',
      description: 'Offset of the first item.',
    },
    {
      name: 'limit',
      type: { kind: 'integer', min: 1, max: Number.MAX_SAFE_INTEGER },
      direction: 'out',
      description: 'Page size used.',
    },
  ],
};
