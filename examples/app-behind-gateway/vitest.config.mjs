import { defineConfig } from 'vitest/config';

// Starting the gateway's containers takes a while the first time.
export default defineConfig({ test: { testTimeout: 60_000, hookTimeout: 300_000 } });
