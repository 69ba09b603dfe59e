import { describe } from 'vitest';
import { startContainerStack } from '../support/container-stack.js';
import { gatewaySuite } from '../support/gateway-suite.js';

/**
 * The black-box suite of the native gateway, unchanged, against the four images started with
 * testcontainers (test/support/container-stack.ts): spec 5.2 and 5.4 as an operator does them
 * (the gateway's environment, the mounted /etc/config), restarts keeping API clients in the
 * database volume and ending engine sessions, fail closed with the sidecar's container stopped.
 */
describe('containers (the images of docker/, started with testcontainers)', () => {
  gatewaySuite(() => startContainerStack({ fqdn: 'gateway.e2e.test' }));
});
