import { describe } from 'vitest';
import { startNativeStack } from '../support/native-stack.js';
import { oidcGatewaySuite } from '../support/oidc-gateway-suite.js';

describe('native gateway with OpenID Connect (npm start)', () => {
  oidcGatewaySuite(({ env }) => startNativeStack({ fqdn: 'gateway.e2e.test', env }));
});
