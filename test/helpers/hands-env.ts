import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// From the module's URL, not vitest's __dirname: the benches (tsx, ES modules) import this too.
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Starts a kind's private test backend (idempotent) and returns the variables it exports. */
export function handsEnv(kind: 'ssh' | 'docker' | 'podman' | 'adb'): Record<string, string> {
  const out = execFileSync('bash', [path.join(root, `test/hands-env/${kind}.sh`), 'start'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 180_000 });
  const vars: Record<string, string> = {};
  for (const m of out.matchAll(/^export (\w+)=['"]?([^'"\n]*)['"]?$/gm)) vars[m[1]!] = m[2]!;
  return vars;
}

/**
 * The ssh and adb backends are shared (fixed ports), and some tests kill, freeze or cut them:
 * ssh-*.test.ts kill the namespace host, freeze every session of the loopback sshd and cut
 * links; adb-*.test.ts kill devices and the adb server. Every test that uses a backend takes a
 * turn on it, so those never hit another file's sessions. The lock is held by a child process and
 * released when its stdin closes (also when this process dies). Resolves, once it is this
 * caller's turn, with the release. Never hold one backend's turn while waiting for another's.
 */
export async function backendTurn(backend: 'ssh' | 'adb'): Promise<() => void> {
  const dir = `/tmp/corral-hands/${backend}`;
  fs.mkdirSync(dir, { recursive: true });
  const holder = spawn('flock', [`${dir}/.test-lock`, 'sh', '-c', 'echo locked; exec cat >/dev/null'], { stdio: ['pipe', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    holder.stdout!.once('data', () => resolve());
    holder.once('error', reject);
    holder.once('exit', (code) => reject(new Error(`flock exited with ${code}`)));
  });
  return () => holder.stdin!.end();
}

/** Runs `fn` during a turn on the backend (see backendTurn). */
export async function withBackendTurn<T>(backend: 'ssh' | 'adb', fn: () => Promise<T>): Promise<T> {
  const release = await backendTurn(backend);
  try {
    return await fn();
  } finally {
    release();
  }
}
