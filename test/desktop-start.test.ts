import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tmpDir } from './helpers/tmp';

const root = path.resolve(__dirname, '..');
const electronDir = path.join(root, 'node_modules', 'electron');
const pathTxt = path.join(electronDir, 'path.txt');
/** Where Electron's binary is installed, `npm start` would start the app: nothing to test then. */
const binaryPresent = fs.existsSync(pathTxt) && fs.existsSync(path.join(electronDir, 'dist', fs.readFileSync(pathTxt, 'utf8')));

describe('npm start where Electron cannot be downloaded', () => {
  it.skipIf(binaryPresent)('ends with one line that says so and points to npm run serve', async () => {
    // The download is made to fail fast and the same everywhere: a mirror nobody listens on, and
    // an empty download cache (a cached zip would succeed).
    const env = { ...process.env, ELECTRON_MIRROR: 'http://127.0.0.1:9/', electron_config_cache: tmpDir(), CORRAL_ELECTRON_DOWNLOAD_TIMEOUT_MS: '20000' };
    const child = spawn(process.execPath, [path.join(root, 'scripts', 'start-desktop.mjs')], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout!.on('data', (d) => (output += d));
    child.stderr!.on('data', (d) => (output += d));
    const code = await new Promise((resolve) => child.once('close', resolve));
    expect(code).toBe(1);
    const lines = output.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^\[start\] Electron \S+ could not be downloaded \(.+\), so the desktop app cannot start here: run `npm run serve`/);
  });
});
