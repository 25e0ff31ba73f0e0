import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';

/**
 * Starts a worker thread running one of the host's worker entries: the TypeScript source when
 * the host itself runs from source (tests, `serve` under tsx), else the built file that
 * electron.vite.config.ts writes next to the host's code.
 *
 * @param callerUrl `import.meta.url` of the module that spawns (tells source from build)
 * @param sourceFile the entry's source, absolute
 * @param builtFile the built entry, absolute
 */
export function spawnWorkerThread(callerUrl: string, sourceFile: string, builtFile: string, options: WorkerOptions = {}): Worker {
  if (callerUrl.endsWith('.ts')) {
    // A worker inherits neither the tsx loader nor `--import`, so it registers tsx itself, then
    // loads the entry.
    const entry = pathToFileURL(sourceFile).href;
    const boot = `import(${JSON.stringify(tsxEsmApi())}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry)}); });`;
    return new Worker(boot, { ...options, eval: true });
  }
  return new Worker(builtFile, options);
}

/** tsx's ESM API (its CommonJS build resolves its loader wrongly from a worker). */
function tsxEsmApi(): string {
  const manifest = createRequire(import.meta.url).resolve('tsx/package.json');
  const pkg = JSON.parse(readFileSync(manifest, 'utf8')) as { exports: Record<string, { import: { default: string } }> };
  return pathToFileURL(path.join(path.dirname(manifest), pkg.exports['./esm/api']!.import.default)).href;
}
