// The data engine's client library.

export type { Query } from './call.js';
export { EngineClient, type EngineClientOptions } from './engine-client.js';
export * from './errors.js';
export type { TlsOptions } from './transport.js';
export * from './types.js';
export { UsersApi } from './users.js';
