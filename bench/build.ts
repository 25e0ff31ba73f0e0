import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
/** The built brain entry the benches fork, as the app does. */
export const brainEntry = path.join(root, 'out/main/brain-entry.js');

/** Builds the main bundle (electron-vite, main only) if the brain entry is missing or older than main/. */
export function ensureBuilt(): void {
  const newest = (dir: string): number =>
    Math.max(0, ...fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }).map((f) => fs.statSync(path.join(dir, f)).mtimeMs));
  if (fs.existsSync(brainEntry) && fs.statSync(brainEntry).mtimeMs >= newest(path.join(root, 'main'))) return;
  console.log('building the brain entry (electron-vite, main only)…');
  const r = spawnSync('npx', ['electron-vite', 'build'], { cwd: root, env: { ...process.env, CORRAL_BUILD_ONLY: 'main' }, stdio: 'inherit' });
  if (r.status !== 0) throw new Error('build failed');
}
