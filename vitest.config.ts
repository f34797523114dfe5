import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // libp2p 3 needs Promise.withResolvers, which Node 20 lacks.
    setupFiles: ['src/polyfill.ts'],
    // Process tests run bin/ → dist/: build it when stale.
    globalSetup: ['test/build-setup.ts'],
    reporters: ['default', './test/summary-reporter.ts'],
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
