#!/usr/bin/env node
// Run before `serve`: rebuilds the renderer (out/renderer) when it is missing or older than
// its sources, so the browser UI never serves a stale build.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const built = path.join(root, 'out', 'renderer', 'index.html');

/** Newest modification time of a file or of any file under a folder. */
function newest(p) {
  const stat = fs.statSync(p, { throwIfNoEntry: false });
  if (!stat) return 0;
  if (!stat.isDirectory()) return stat.mtimeMs;
  return fs.readdirSync(p).reduce((max, name) => Math.max(max, newest(path.join(p, name))), stat.mtimeMs);
}

const builtAt = fs.statSync(built, { throwIfNoEntry: false })?.mtimeMs ?? 0;
const sourcesAt = Math.max(newest(path.join(root, 'renderer')), newest(path.join(root, 'electron.vite.config.ts')));
if (builtAt > 0 && builtAt >= sourcesAt) process.exit(0);

console.log(`[ensure-renderer] ${builtAt ? 'renderer sources changed' : 'no renderer build'}; building out/renderer`);
const res = spawnSync(process.execPath, [path.join(root, 'node_modules', 'electron-vite', 'bin', 'electron-vite.js'), 'build', '--ignoreConfigWarning'], {
  cwd: root,
  stdio: 'inherit',
  // electron.vite.config.ts then builds the renderer alone (main and preload are not needed).
  env: { ...process.env, CORRAL_BUILD_ONLY: 'renderer' },
});
if (res.status !== 0) {
  console.error('[ensure-renderer] the renderer build failed');
  process.exit(res.status ?? 1);
}
