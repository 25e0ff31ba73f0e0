import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { builtBrainEntry, freshBuiltEntry } from '../main/brain/built-entry';

const root = path.resolve(import.meta.dirname, '..');
/** The built brain entry the benches fork, as the app does. */
export const brainEntry = builtBrainEntry(path.join(root, 'main'));

/** Builds the main bundle (electron-vite, main only) if the brain entry is missing or older than main/. */
export function ensureBuilt(): void {
  if (freshBuiltEntry(path.join(root, 'main'))) return;
  console.log('building the brain entry (electron-vite, main only)…');
  const r = spawnSync('npx', ['electron-vite', 'build'], { cwd: root, env: { ...process.env, CORRAL_BUILD_ONLY: 'main' }, stdio: 'inherit' });
  if (r.status !== 0) throw new Error('build failed');
}
