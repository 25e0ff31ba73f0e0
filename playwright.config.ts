import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { defineConfig } from '@playwright/test';

// One serve process for the suite: a fresh data folder, a known key, a fixed loopback port.
// The config is loaded again in each worker: keep the first load's choices in the environment.
process.env.E2E_PORT ??= String(18700 + Math.floor(Math.random() * 500));
process.env.E2E_DATA ??= fs.mkdtempSync(path.join(os.tmpdir(), 'corral-e2e-'));
const port = Number(process.env.E2E_PORT);
const dataDir = process.env.E2E_DATA;
process.env.E2E_BASE_URL = `http://127.0.0.1:${port}`;
process.env.E2E_API_KEY ??= 'e2e-key-0123456789';

export default defineConfig({
  testDir: 'e2e',
  timeout: 60_000,
  fullyParallel: false,
  workers: 1,
  reporter: [['list']],
  use: {
    baseURL: process.env.E2E_BASE_URL,
    launchOptions: {
      executablePath: '/usr/bin/chromium',
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
    },
    trace: 'retain-on-failure',
  },
  webServer: {
    command: `npm run serve -- --port ${port} --data ${dataDir}`,
    url: `http://127.0.0.1:${port}/v1/agents`,
    // 401 without a key still means "up".
    ignoreHTTPSErrors: true,
    reuseExistingServer: false,
    timeout: 120_000,
    env: { CORRAL_API_KEY: process.env.E2E_API_KEY },
    stdout: 'pipe',
  },
});
