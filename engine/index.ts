// The engine's public surface for code that starts it in-process (tests, the native runner).

export { ENVIRONMENT, optionsFromEnv } from './env.js';
export type { ErrorResult, OkResult } from './envelope.js';
export type { EngineOptions, RunningEngine } from './server.js';
export { startEngine } from './server.js';
export { SettingsError } from './settings.js';
export type { EngineSettings } from './state.js';
export type { ApiVersion } from './versions.js';
export { formatVersion, parseVersion } from './versions.js';
