// The data engine's client library.

export { EngineClient, type EngineClientOptions, type Query } from './engine-client.js';
export * from './errors.js';
export type { TlsOptions } from './transport.js';
export * from './types.js';
export { UsersApi } from './users.js';
