#!/usr/bin/env node
// `node scripts/ensure-built.mjs [serve]`: rebuilds what is missing or older than its sources, so
// a browser never gets a stale UI and `serve` never runs stale code: the renderer (out/renderer)
// always; with `serve`, the host's bundle too (out/main, which `npm run serve` runs).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const config = path.join(root, 'electron.vite.config.ts');

/** Newest modification time of a file or of any file under a folder. */
function newest(p) {
  const stat = fs.statSync(p, { throwIfNoEntry: false });
  if (!stat) return 0;
  if (!stat.isDirectory()) return stat.mtimeMs;
  return fs.readdirSync(p).reduce((max, name) => Math.max(max, newest(path.join(p, name))), stat.mtimeMs);
}

/** Builds `part` (electron.vite.config.ts's CORRAL_BUILD_ONLY) if `built` is missing or older than `sources`. */
function ensure(part, built, sources) {
  const builtAt = fs.statSync(built, { throwIfNoEntry: false })?.mtimeMs ?? 0;
  if (builtAt > 0 && builtAt >= Math.max(...sources.map(newest))) return;
  const where = path.relative(root, path.dirname(built));
  console.log(`[ensure-built] ${builtAt ? `${part} sources changed` : `no ${part} build`}; building ${where}`);
  const res = spawnSync(process.execPath, [path.join(root, 'node_modules', 'electron-vite', 'bin', 'electron-vite.js'), 'build', '--ignoreConfigWarning'], {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, CORRAL_BUILD_ONLY: part },
  });
  if (res.status !== 0) {
    console.error(`[ensure-built] the ${part} build failed`);
    process.exit(res.status ?? 1);
  }
}

ensure('renderer', path.join(root, 'out', 'renderer', 'index.html'), [path.join(root, 'renderer'), config]);
// The host's code imports nothing outside main/ but package.json (its version).
if (process.argv[2] === 'serve') ensure('main', path.join(root, 'out', 'main', 'serve.js'), [path.join(root, 'main'), path.join(root, 'package.json'), config]);
