import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/**
 * The SSH test backend for e2e specs (Playwright loads specs as ES modules, so
 * test/helpers/hands-env.ts, written for vitest's __dirname, cannot be imported): start it and
 * read its variables, and take a turn on it as the vitest files do (they kill and freeze it).
 */
const root = path.resolve(import.meta.dirname, '..');

export function sshEnv(kind: 'ssh' | 'docker' | 'adb' = 'ssh'): Record<string, string> {
  const out = execFileSync('bash', [path.join(root, `test/hands-env/${kind}.sh`), 'start'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 180_000 });
  return Object.fromEntries([...out.matchAll(/^export (\w+)=['"]?([^'"\n]*)['"]?$/gm)].map((m) => [m[1]!, m[2]!]));
}

/** Waits for this caller's turn on the SSH (or adb) backend (the lock file test/helpers/hands-env.ts uses); resolves with the release. */
export async function sshTurn(backend: 'ssh' | 'adb' = 'ssh'): Promise<() => void> {
  const dir = `/tmp/corral-hands/${backend}`;
  fs.mkdirSync(dir, { recursive: true });
  const holder = spawn('flock', [`${dir}/.test-lock`, 'sh', '-c', 'echo locked; exec cat >/dev/null'], { stdio: ['pipe', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    holder.stdout!.once('data', () => resolve());
    holder.once('error', reject);
  });
  return () => holder.stdin!.end();
}
