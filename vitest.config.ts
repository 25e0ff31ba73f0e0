import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'main/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Tests that start servers and child processes share 2 cores; keep parallelism modest.
    maxWorkers: 2,
  },
});
