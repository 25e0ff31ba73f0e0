import { defineConfig } from 'vitest/config';

// Tests that must run alone (test/alone: timing measurements, and tests that replace a shared
// backend's artefacts) run after the rest, one file at a time: `npm run test:alone`.
const alone = process.env.VITEST_ALONE === '1';

export default defineConfig({
  test: {
    include: alone ? ['test/alone/**/*.test.ts'] : ['test/**/*.test.ts', 'main/**/*.test.ts'],
    exclude: alone ? [] : ['test/alone/**', '**/node_modules/**'],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    // Tests that start servers and child processes share 2 cores; keep parallelism modest.
    maxWorkers: alone ? 1 : 2,
  },
});
