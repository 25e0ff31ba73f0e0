import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

// The test backends, as test/helpers/hands-env.ts starts them (that file needs vitest's __dirname).
const root = path.resolve(import.meta.dirname, '..');

/** Starts a kind's private test backend (idempotent: never stops one) and returns its variables. */
export function backendEnv(kind: 'ssh' | 'docker'): Record<string, string> {
  const out = execFileSync('bash', [path.join(root, `test/hands-env/${kind}.sh`), 'start'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 180_000 });
  const vars: Record<string, string> = {};
  for (const m of out.matchAll(/^export (\w+)=['"]?([^'"\n]*)['"]?$/gm)) vars[m[1]!] = m[2]!;
  return vars;
}

/**
 * A turn on the shared ssh backend (the lock test/helpers/hands-env.ts takes: tests that kill or
 * freeze its hosts then wait for the bench, and the bench for them). Resolves with the release.
 */
export async function sshTurn(): Promise<() => void> {
  const dir = '/tmp/corral-hands/ssh';
  fs.mkdirSync(dir, { recursive: true });
  const holder = spawn('flock', [`${dir}/.test-lock`, 'sh', '-c', 'echo locked; exec cat >/dev/null'], { stdio: ['pipe', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    holder.stdout!.once('data', () => resolve());
    holder.once('error', reject);
    holder.once('exit', (code) => reject(new Error(`flock exited with ${code}`)));
  });
  return () => holder.stdin!.end();
}
