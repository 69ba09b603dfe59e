import { describe } from 'vitest';
import { consoleSuite } from '../support/console-suite.js';
import { startContainerStack } from '../support/container-stack.js';

/**
 * The console against the four containers, driven by headless chromium on this machine. The
 * OpenID Connect sign-in is the native suite's (test/e2e/console.test.ts): its provider runs in
 * the test's own process, which the containers' network does not reach.
 */
describe('containers: the browser console', () => {
  consoleSuite(() => startContainerStack(), { oidc: false });
});
