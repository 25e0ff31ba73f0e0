import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import Anthropic from '@anthropic-ai/sdk';

// `serve` in a process of its own, as the tests that kill, restart or dial into it need it: one
// spawn-and-wait for all of them, so they start it the same way.

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** The API key the tests give `serve` (it refuses keys under 32 characters). */
export const SERVE_KEY = 'serve-key-0123456789-0123456789-0123';

/** A running `serve`: its launcher process, its base URL and an API-key client of the official SDK. */
export interface ServeProcess {
  child: ChildProcess;
  url: string;
  client: Anthropic;
}

/** How to start one. */
export interface ServeOptions {
  dataDir: string;
  /** Every child started is pushed here, for the test's afterAll to kill. */
  children: ChildProcess[];
  /** Added to (and overriding) the test's environment, after the defaults below. */
  env?: Record<string, string>;
  /** More command-line arguments (`--work-root`, `--no-sandbox`, …). */
  args?: string[];
  /** The API key (default SERVE_KEY). */
  apiKey?: string;
  /** How long to wait for the "API at" line (default 30 s). */
  startMs?: number;
  /** Runs the build `npm run serve` runs (out/main/serve.js) instead of the source under tsx. */
  built?: boolean;
}

/** The build of serve's entry (electron.vite.config.ts), as `npm run serve` runs it. */
export const BUILT_SERVE = path.join(root, 'out/main/serve.js');

/**
 * Starts `npm run serve`'s entry on a free port (`--port 0`) and resolves once it prints where
 * its API listens; rejects if it exits first or does not say so in time. Defaults: the API key,
 * a placeholder model key (tests point ANTHROPIC_BASE_URL at the scripted model server) and
 * short model retries.
 */
export function startServe(o: ServeOptions): Promise<ServeProcess> {
  const apiKey = o.apiKey ?? SERVE_KEY;
  const entry = o.built ? [BUILT_SERVE] : ['--import', 'tsx', path.join(root, 'main/serve.ts')];
  const child = spawn(process.execPath, [...entry, '--port', '0', '--data', o.dataDir, ...(o.args ?? [])], {
    cwd: root,
    env: { ...process.env, CORRAL_API_KEY: apiKey, ANTHROPIC_API_KEY: 'model-key', CORRAL_RETRY_BASE_MS: '20', ...o.env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  o.children.push(child);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('serve did not start')), o.startMs ?? 30_000);
    readline.createInterface({ input: child.stdout! }).on('line', (line) => {
      const m = /API at (http:\/\/\S+)\/v1/.exec(line);
      if (m) {
        clearTimeout(timer);
        resolve({ child, url: m[1]!, client: new Anthropic({ apiKey, baseURL: m[1]!, maxRetries: 0 }) });
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited with ${code}`));
    });
  });
}
