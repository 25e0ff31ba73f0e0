#!/usr/bin/env node
// `npm start [-- --data DIR]`: the desktop app. Electron needs better-sqlite3 built for its own
// ABI, while the tests and `serve` need the Node build in node_modules. So the Electron build
// lives apart, in .cache/electron-native/<electron>-<better-sqlite3>/, and the app is pointed
// at it with CORRAL_SQLITE_BINDING. node_modules/better-sqlite3 is never touched.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const modules = path.join(root, 'node_modules');
const win = process.platform === 'win32';

const say = (msg) => console.log(`[start] ${msg}`);
const die = (msg) => {
  console.error(`[start] ${msg}`);
  process.exit(1);
};
const versionOf = (pkg) => JSON.parse(fs.readFileSync(path.join(modules, pkg, 'package.json'), 'utf8')).version;
/** Runs a command, showing its output; true when it exits with 0. */
const run = (cmd, args, cwd) => {
  say(`$ ${[cmd, ...args].join(' ')}${cwd === root ? '' : `   (in ${path.relative(root, cwd)})`}`);
  // npm is a .cmd on Windows, which only a shell can start.
  const res = spawnSync(cmd, args, { cwd, stdio: 'inherit', shell: win && cmd === 'npm' });
  if (res.error) console.error(`[start] ${res.error.message}`);
  return res.status === 0;
};

if (!fs.existsSync(path.join(modules, 'electron', 'package.json'))) die('Electron is not installed (run `npm ci` first); `npm run serve` runs Corral without it');
const electron = versionOf('electron');

// Electron's binary first: where it cannot be had (no network, a blocked download) nothing else
// is worth doing, and `require('electron')` would retry the download and end in a stack trace.
ensureElectronBinary();

const sqlite = versionOf('better-sqlite3');
const dir = path.join(root, '.cache', 'electron-native', `${electron}-${sqlite}`, 'better-sqlite3');
const binding = path.join(dir, 'build', 'Release', 'better_sqlite3.node');

if (fs.existsSync(binding)) {
  say(`better-sqlite3 ${sqlite} for Electron ${electron}: ${path.relative(root, binding)}`);
} else {
  say(`building better-sqlite3 ${sqlite} for Electron ${electron} in ${path.relative(root, dir)}`);
  fs.rmSync(dir, { recursive: true, force: true });
  // Everything but the Node build (build/), so a failed Electron build cannot leave a Node
  // binary where the Electron one should be.
  const source = path.join(modules, 'better-sqlite3');
  fs.cpSync(source, dir, { recursive: true, filter: (src) => path.relative(source, src).split(path.sep)[0] !== 'build' });
  const prebuilt = run(process.execPath, [path.join(modules, 'prebuild-install', 'bin.js'), '--runtime', 'electron', '--target', electron], dir);
  if (!prebuilt || !fs.existsSync(binding)) {
    say('no prebuilt binary; compiling with node-gyp (needs Python and a C++ toolchain)');
    const args = ['exec', '--yes', '--', 'node-gyp', 'rebuild', '--release', '--runtime=electron', `--target=${electron}`, '--dist-url=https://electronjs.org/headers'];
    if (!run('npm', args, dir) || !fs.existsSync(binding)) {
      fs.rmSync(dir, { recursive: true, force: true });
      die('could not build better-sqlite3 for Electron; see the output above');
    }
  }
  say(`built ${path.relative(root, binding)}`);
}

// Build (main, preload, renderer) and start the app; arguments after `--` go to the app.
const args = process.argv.slice(2);
const cli = [path.join(modules, 'electron-vite', 'bin', 'electron-vite.js'), 'preview', ...(args.length ? ['--', ...args] : [])];
say(`$ electron-vite preview${args.length ? ` -- ${args.join(' ')}` : ''}   (CORRAL_SQLITE_BINDING=${binding})`);
const child = spawn(process.execPath, cli, { cwd: root, stdio: 'inherit', env: { ...process.env, CORRAL_SQLITE_BINDING: binding } });
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));

/** Whether the electron package has its binary (what `require('electron')` looks for). */
function electronBinaryPresent() {
  if (process.env.ELECTRON_OVERRIDE_DIST_PATH) return true;
  try {
    const rel = fs.readFileSync(path.join(modules, 'electron', 'path.txt'), 'utf8');
    return fs.existsSync(path.join(modules, 'electron', 'dist', rel));
  } catch {
    return false;
  }
}

/**
 * Downloads Electron's binary on first use with the electron package's own installer, quietly
 * and with a time limit. Where that fails, the output is one line that says so and what runs
 * instead, and the exit code 1.
 */
function ensureElectronBinary() {
  if (electronBinaryPresent()) return;
  const limitMs = Number(process.env.CORRAL_ELECTRON_DOWNLOAD_TIMEOUT_MS) || 10 * 60_000;
  const tty = process.stdout.isTTY;
  // On a terminal a progress note, erased afterwards; in a pipe, nothing until there is news.
  if (tty) process.stdout.write(`[start] downloading Electron ${electron} (first start)…`);
  const res = spawnSync(process.execPath, [path.join(modules, 'electron', 'install.js')], {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: limitMs,
    killSignal: 'SIGKILL',
  });
  if (tty) process.stdout.write('\r\x1b[K');
  if (res.status === 0 && electronBinaryPresent()) return;
  const why =
    res.error?.code === 'ETIMEDOUT' || res.signal
      ? `no download within ${Math.round(limitMs / 1000)} s`
      : (firstErrorLine(`${res.stderr ?? ''}\n${res.stdout ?? ''}`) ?? `its installer exited with ${res.status}`);
  die(`Electron ${electron} could not be downloaded (${why}), so the desktop app cannot start here: run \`npm run serve\` for the same app in a browser`);
}

/** The first line of an installer's output that is not a stack frame, shortened. */
function firstErrorLine(text) {
  const line = text
    .split('\n')
    .map((l) => l.trim())
    .find((l) => l && !l.startsWith('at ') && !/^node:internal|^\^|^[{}]$/.test(l));
  return line && (line.length > 120 ? `${line.slice(0, 120)}…` : line);
}
