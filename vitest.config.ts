import { defineConfig } from 'vitest/config';

// Timing tests (test/timing) run alone, after the rest: `npm run test:timing`.
const timing = process.env.VITEST_TIMING === '1';

export default defineConfig({
  test: {
    include: timing ? ['test/timing/**/*.test.ts'] : ['test/**/*.test.ts', 'main/**/*.test.ts'],
    exclude: timing ? [] : ['test/timing/**', '**/node_modules/**'],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    // Tests that start servers and child processes share 2 cores; keep parallelism modest.
    maxWorkers: timing ? 1 : 2,
  },
});
