import { describe } from 'vitest';
import { consoleSuite } from '../support/console-suite.js';
import { startContainerStack } from '../support/container-stack.js';
import { setDefaultConf } from '../support/default-conf.js';

const CA_IN_GATEWAY = '/etc/gateway/oidc-ca.pem';

/**
 * The console against the four containers, driven by headless chromium on this machine. The
 * OpenID Connect provider runs in the test's process, on every interface, reached by the
 * gateway's container as `host.containers.internal` (podman's name for the host) and by the
 * browser through the same name mapped to loopback. The stack is configured as an operator
 * does it: the provider's CA mounted and named in OIDC_CA_FILE, default.conf edited, restart.
 */
describe('containers: the browser console', () => {
  consoleSuite(
    async ({ caFile, defaultConf }) => {
      const stack = await startContainerStack({
        gatewayBindMounts: [{ source: caFile, target: CA_IN_GATEWAY, mode: 'ro' }],
        gatewayEnv: { OIDC_CA_FILE: CA_IN_GATEWAY },
      });
      await setDefaultConf(stack.configDir, defaultConf);
      await stack.restart();
      return stack;
    },
    { providerName: 'host.containers.internal', providerListen: '0.0.0.0' },
  );
});
