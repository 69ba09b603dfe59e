/**
 * The gateway as a testcontainers module for users' own tests (`<package>/testcontainers`),
 * in the style of `@testcontainers/postgresql`. README: "Testing your application behind the
 * gateway"; decision: docs/decisions/20261125-testcontainers-module.md.
 */
export { GatewayStartError } from './errors.js';
export { GatewayContainer } from './gateway-container.js';
export { BUILT_IMAGES, type GatewayImages } from './images.js';
export type { CreateClientOptions, GatewayClient } from './management.js';
export type { GatewaySettings, OidcOptions } from './options.js';
export {
  type GatewayRequestOptions,
  type GatewayResponse,
  StartedGatewayContainer,
} from './started-gateway.js';
