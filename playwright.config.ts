import { defineConfig } from '@playwright/test';

// e2e/global-setup.ts starts a scripted model server and `npm run serve` against it, and
// passes the URL and key to the tests in E2E_BASE_URL / E2E_API_KEY.
export default defineConfig({
  testDir: 'e2e',
  testMatch: '**/*.spec.ts',
  globalSetup: './e2e/global-setup.ts',
  timeout: 60_000,
  fullyParallel: false,
  workers: 1,
  reporter: [['list']],
  use: {
    launchOptions: {
      executablePath: '/usr/bin/chromium',
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
    },
    trace: 'retain-on-failure',
  },
});
