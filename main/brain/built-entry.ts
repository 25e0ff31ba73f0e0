/**
 * The brain's built entry, for a host running from source (`npm run serve`, the tests): a brain
 * forked from the TypeScript entry under tsx takes about a second to start on 2 cores, the
 * bundle a fraction of that. It is the same code only while no source file is newer than it.
 */
import fs from 'node:fs';
import path from 'node:path';

/** The newest modification time of any file under `dir` (0 for none). */
export function newestMtimeUnder(dir: string): number {
  let newest = 0;
  for (const f of fs.readdirSync(dir, { recursive: true, encoding: 'utf8' })) newest = Math.max(newest, fs.statSync(path.join(dir, f)).mtimeMs);
  return newest;
}

/** `out/main/brain-entry.js` of the checkout whose `main/` folder is `mainDir`. */
export const builtBrainEntry = (mainDir: string) => path.resolve(mainDir, '..', 'out', 'main', 'brain-entry.js');

/** The built entry if it exists and is at least as new as every file under `mainDir`, else undefined. */
export function freshBuiltEntry(mainDir: string): string | undefined {
  const built = builtBrainEntry(mainDir);
  try {
    return fs.statSync(built).mtimeMs >= newestMtimeUnder(mainDir) ? built : undefined;
  } catch {
    return undefined;
  }
}
