/**
 * The generator as a library: the native runner and the container entrypoint call these
 * in-process; `gateway-config` (cli.ts) is a thin shell around them.
 */
export {
  FORWARDED_TO_SIDECAR,
  IDENTITY_FROM_SIDECAR,
  REFUSAL_FROM_SIDECAR,
} from '../common/contract.js';
export { C_CONTRACT_PATH, renderCContract } from './c-contract.js';
export {
  CERTIFICATE_VALIDITY_DAYS,
  type CertificatePair,
  createSelfSignedCertificate,
} from './certificate.js';
export { type CertificateFiles, certificateProblems } from './certificate-check.js';
export {
  type CertificateRenewal,
  generatedCertificateDue,
  isGeneratedCertificate,
  RENEW_WITHIN_DAYS,
} from './certificate-renewal.js';
export { type CheckOptions, type CheckReport, checkConfigDir } from './check.js';
export { renewalLines, runCli } from './cli-run.js';
export {
  type ConfigDirOptions,
  type ConfigDirResult,
  ensureConfigDir,
  renderConfigDir,
} from './config-dir.js';
export {
  CertificateError,
  GeneratorError,
  SettingsError,
} from './errors.js';
export { inConfigDir, LAYOUT } from './layout.js';
export { LUA_CONTRACT_PATH, renderLuaContract } from './lua-contract.js';
export {
  defaultLuaDir,
  detectModules,
  type MainConfOptions,
  mainConfPath,
  nginxArgs,
  renderMainConf,
  writeMainConf,
} from './main-conf.js';
export {
  NATIVE_HOME_FILE,
  type NativeHome,
  type NativePlaces,
  type NativeRepair,
  nativeConfProblems,
  nativeDefaults,
  nativeOverrides,
  readNativeHome,
  repairNativeConf,
  writeNativeHome,
} from './native-home.js';
export {
  findNginx,
  type NginxTestResult,
  nginxHasLua,
  testNginxConfig,
} from './nginx-binary.js';
export {
  type PreparedProxy,
  PrepareError,
  type PrepareOptions,
  prepareProxy,
} from './prepare.js';
export { type RenderedFile, renderConfigFiles } from './render.js';
export { describeChanges, type RenderChange, renderChanges } from './render-changes.js';
export { readServerConf, type ServerConfFacts } from './rendered-conf.js';
export {
  type LoadSettingsOptions,
  loadSettings,
  parseSettings,
  type RawSettings,
  SETTINGS_ENV,
  SETTINGS_FILE_ENV,
  type Settings,
} from './settings.js';
export { ALLOWED_KEYS, DEFAULT_CIPHERS, TLS_PROTOCOLS } from './settings-schema.js';
export { PROOF_FILE_MODE, ProofFileError } from './sidecar-proof-file.js';
