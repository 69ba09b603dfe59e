import { describe } from 'vitest';
import { consoleSuite } from '../support/console-suite.js';
import { startNativeStack } from '../support/native-stack.js';

describe('native gateway: the browser console (npm start)', () => {
  consoleSuite(({ env }) => startNativeStack({ env }));
});
