// Wire types of the engine protocol as a client sees them. The client does not import the
// engine's code: it is meant to be usable against any engine that speaks the protocol.

/** An API version. */
export interface ApiVersion {
  major: number;
  minor: number;
  micro: number;
}

/** The versions this client library speaks, one per major. */
export const CLIENT_VERSIONS: readonly ApiVersion[] = [
  { major: 2, minor: 1, micro: 0 },
  { major: 1, minor: 2, micro: 0 },
];

export type LoginTarget = 'SYSTEM' | 'DOMAIN';

export interface ApiSession {
  type: 'APISession';
  version: ApiVersion & { type: 'APIVersion' };
  locale: string;
  client: null;
}

/** What negotiation settled on. */
export interface NegotiatedSession {
  /** The version this client asked for (the one of that major it speaks). */
  requested: ApiVersion;
  /** The engine's native version of that major. */
  native: ApiVersion;
  /** The version both sides speak: the lower minor of the two. */
  effective: ApiVersion;
  locale: string;
}

/** A user; which optional fields are present depends on the session's version. */
export interface User {
  type: 'User';
  name: string;
  target: LoginTarget;
  fullName: string;
  /** Major 1 only. */
  admin?: boolean;
  /** Since 1.1. */
  email?: string;
  /** Since 1.2. */
  lastLogin?: string | null;
  /** Since 2.0. */
  role?: 'ADMINISTRATOR' | 'USER';
  /** Since 2.1. */
  enabled?: boolean;
}

/** Fields a client may send for a user; send only those its session's version knows. */
export interface UserInput {
  name?: string;
  target?: LoginTarget;
  password?: string;
  fullName?: string;
  admin?: boolean;
  email?: string;
  role?: 'ADMINISTRATOR' | 'USER';
  enabled?: boolean;
}

export interface UserList {
  type: 'UserList';
  items: User[];
  total: number;
  offset: number;
  limit: number;
}

/** What `about` says of the engine. */
export interface PublicSystemInfo {
  type: 'PublicSystemInfo';
  productName: string;
  apiVersion: ApiVersion & { type: 'APIVersion' };
  apiVersions: (ApiVersion & { type: 'APIVersion' })[];
}

export interface LoginResult {
  type: 'LoginResult';
  user: User;
}

export interface GatewayIdentity {
  type: 'GatewayIdentity';
  clientId: string;
  clientName: string;
  isAdmin: boolean;
}

export interface Identity {
  type: 'Identity';
  user: User;
  gateway: GatewayIdentity | null;
}

export interface Diagnosis {
  type: 'Diagnosis';
  field: string;
  message: string;
}

/** The error part of an `ErrorResult`. */
export interface ApiErrorBody {
  type: 'APIError';
  details: string;
  action: string | null;
  id: string;
  commandOutput: string | null;
  diagnoses: Diagnosis[];
}
