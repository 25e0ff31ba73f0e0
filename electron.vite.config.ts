import { resolve } from 'node:path';
import react from '@vitejs/plugin-react';
import { defineConfig, type UserConfig } from 'electron-vite';
import type { Plugin } from 'vite';

const root = import.meta.dirname;

/**
 * The renderer's Content-Security-Policy lives in renderer/index.html (a meta tag), so it holds
 * both in the desktop window (file://) and when `serve` hands the page to a browser. Vite's dev
 * server needs an inline React Refresh preamble and its HMR socket; this loosens the policy for
 * `electron-vite dev` only. Production builds keep the strict one.
 */
function devCsp(): Plugin {
  return {
    name: 'corral:dev-csp',
    apply: 'serve',
    transformIndexHtml: (html) =>
      html
        .replace("script-src 'self'", "script-src 'self' 'unsafe-inline'")
        .replace("connect-src 'self'", "connect-src 'self' ws: http:")
        .replace("style-src 'self'", "style-src 'self' 'unsafe-inline'"),
  };
}

/** `CORRAL_BUILD_ONLY=renderer` builds the renderer alone (scripts/ensure-built.mjs uses it). */
const only = process.env.CORRAL_BUILD_ONLY;

const config: UserConfig = {
  main: {
    build: {
      outDir: resolve(root, 'out/main'),
      // better-sqlite3, zod, ulid … stay external: the native addon cannot be bundled.
      externalizeDeps: true,
      // The brain runs in its own process: a second entry the supervisor forks (brain-entry.js),
      // started by the launcher (launcher.js, see launcher/launcher-process.ts), which also starts git and tar for the hands.
      // The local hand's worker threads run a third (local-hand-worker.js, see hands/local/off-loop/lanes.ts),
      // and the UI's model-request view a fourth (model-request-worker.js, api/ui/calls/model-request.ts);
      // the sandbox runtime has a thread of its own (sandbox-runtime-worker.js, hands/local/sandbox-thread.ts).
      // `npm run serve` runs serve.js: the headless host runs the same bundle as the app's.
      lib: {
        entry: {
          index: resolve(root, 'main/shell/index.ts'),
          serve: resolve(root, 'main/serve.ts'),
          'brain-entry': resolve(root, 'main/brain/entry.ts'),
          launcher: resolve(root, 'main/launcher/entry.ts'),
          'local-hand-worker': resolve(root, 'main/hands/local/off-loop/worker.ts'),
          'model-request-worker': resolve(root, 'main/api/ui/calls/model-request-worker.ts'),
          'sandbox-runtime-worker': resolve(root, 'main/hands/local/sandbox-runtime-worker.ts'),
        },
      },
    },
  },
  preload: {
    build: {
      outDir: resolve(root, 'out/preload'),
      // Sandboxed preloads can require only a few built-ins: bundle everything else in.
      externalizeDeps: false,
      rolldownOptions: {
        input: { index: resolve(root, 'preload/index.ts') },
        // Sandboxed preloads cannot be ES modules.
        output: { format: 'cjs', entryFileNames: '[name].cjs' },
      },
    },
  },
  renderer: {
    root: resolve(root, 'renderer'),
    // Relative asset paths: the same build loads from file:// and from `serve` in a browser.
    base: './',
    plugins: [react(), devCsp()],
    build: {
      outDir: resolve(root, 'out/renderer'),
      // Browsers fetch this from `serve` too: ship it small.
      minify: true,
      rolldownOptions: { input: resolve(root, 'renderer/index.html') },
    },
  },
};

if (only && !['main', 'preload', 'renderer'].includes(only)) throw new Error(`CORRAL_BUILD_ONLY must be main, preload or renderer, not '${only}'`);

export default defineConfig(only ? { [only]: config[only as keyof UserConfig] } : config);
