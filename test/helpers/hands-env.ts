import { execFileSync } from 'node:child_process';
import path from 'node:path';

const root = path.resolve(__dirname, '../..');

/** Starts a kind's private test backend (idempotent) and returns the variables it exports. */
export function handsEnv(kind: 'ssh' | 'docker' | 'podman' | 'adb'): Record<string, string> {
  const out = execFileSync('bash', [path.join(root, `test/hands-env/${kind}.sh`), 'start'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 180_000 });
  const vars: Record<string, string> = {};
  for (const m of out.matchAll(/^export (\w+)=['"]?([^'"\n]*)['"]?$/gm)) vars[m[1]!] = m[2]!;
  return vars;
}
