import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { startModelServer } from '../test/fixtures/model-server';
import { e2eModel } from './model-script';

/**
 * Starts a scripted model server and `npm run serve` against it (a fresh data folder, a known
 * key, a free port); the tests find them through E2E_* variables.
 */
export default async function globalSetup(): Promise<() => Promise<void>> {
  const model = await startModelServer(e2eModel);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'corral-e2e-'));
  // Work folders live outside the data folder.
  const workRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'corral-e2e-work-'));
  const apiKey = 'e2e-key-0123456789-0123456789-0123456789';
  const child = spawn('npm', ['run', 'serve', '--', '--port', '0', '--data', dataDir, '--work-root', workRoot], {
    cwd: path.resolve(import.meta.dirname, '..'),
    env: { ...process.env, ...backendEnv(), CORRAL_API_KEY: apiKey, ANTHROPIC_BASE_URL: model.url, ANTHROPIC_API_KEY: 'e2e-model-key' },
    stdio: ['ignore', 'pipe', 'inherit'],
    detached: true,
  });
  let url = '';
  // The one-time link is the last line serve prints at start.
  const printedLink = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('serve did not print its link within 120 s')), 120_000);
    readline.createInterface({ input: child.stdout! }).on('line', (line) => {
      process.stdout.write(`[serve] ${line}\n`);
      const m = /API at (http:\/\/\S+)\/v1/.exec(line);
      if (m) url = m[1]!;
      const l = /open (http:\/\/\S+)/.exec(line);
      if (l) {
        clearTimeout(timer);
        resolve(l[1]!);
      }
    });
    child.once('exit', (code) => reject(new Error(`serve exited early with code ${code}`)));
  });
  process.env.E2E_BASE_URL = url;
  process.env.E2E_API_KEY = apiKey;
  process.env.E2E_LINK = printedLink;
  process.env.E2E_DATA = dataDir;
  process.env.E2E_WORK = workRoot;
  return async () => {
    // npm runs serve in a child: stop the whole group.
    try {
      process.kill(-child.pid!, 'SIGTERM');
    } catch {
      // already gone
    }
    await model.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
    fs.rmSync(workRoot, { recursive: true, force: true });
  };
}

/**
 * The container engine and adb server of the hands test backends, when they run (their env files
 * exist), so the hands panel's discovery finds them as it finds a user's (e2e/machines-dnd.spec.ts).
 */
function backendEnv(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [file, names] of [['docker.env', ['CORRAL_TEST_DOCKER_HOST']], ['adb.env', ['ANDROID_ADB_SERVER_PORT']]] as const) {
    let text = '';
    try {
      text = fs.readFileSync(path.join('/tmp/corral-hands', file), 'utf8');
    } catch {
      continue;
    }
    for (const m of text.matchAll(/^export (\w+)=['"]?([^'"\n]*)['"]?$/gm)) if ((names as readonly string[]).includes(m[1]!)) out[m[1] === 'CORRAL_TEST_DOCKER_HOST' ? 'DOCKER_HOST' : m[1]!] = m[2]!;
  }
  return out;
}
