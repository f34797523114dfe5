import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import SlowFirstSequencer from './test/sequencer.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // libp2p 3 needs Promise.withResolvers, which Node 20 lacks.
    setupFiles: ['src/polyfill.ts'],
    // Process tests run bin/ → dist/: build it when stale.
    globalSetup: ['test/build-setup.ts'],
    reporters: ['default', './test/summary-reporter.ts'],
    pool: 'forks',
    // vitest's default is one worker fewer than the cores: on the 2-core CI
    // that is ONE worker, and the suite ran file after file (wall ≈ the sum of
    // the files). Most of the slow files wait (on protocol timers, child
    // processes, npm), so two run side by side on two cores.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    // Slowest files first (test/sequencer.ts): the long pole starts at once.
    sequence: { sequencer: SlowFirstSequencer },
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
