import fs from 'node:fs';
import path from 'node:path';
import type { WorkDir } from './paths';

/** Stop walking a tree after this many entries. */
export const MAX_WALK_ENTRIES = 200_000;
/** Folders glob and grep skip unless the glob pattern names them. */
export const SKIPPED_DIRS = ['.git', 'node_modules'];

export interface WalkResult {
  /** Real absolute paths of files (and of symlinks to files inside the work folder). */
  files: string[];
  /** True when the walk stopped early at MAX_WALK_ENTRIES. */
  stopped: boolean;
}

/**
 * All files under `root` (sorted), skipping `skip` folder names and symlinks leading outside.
 * Synchronous: it runs on a worker thread (off-loop/), never on the host's event loop.
 */
export function walk(work: WorkDir, root: string, skip: readonly string[]): WalkResult {
  const files: string[] = [];
  const stack = [root];
  let seen = 0;
  while (stack.length > 0) {
    const dir = stack.pop()!;
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      continue; // Unreadable folder: skip it.
    }
    for (const e of entries) {
      if (++seen > MAX_WALK_ENTRIES) return { files: files.sort(), stopped: true };
      const abs = path.join(dir, e.name);
      if (e.isDirectory()) {
        if (!skip.includes(e.name)) stack.push(abs);
      } else if (e.isFile()) {
        files.push(abs);
      } else if (e.isSymbolicLink()) {
        // Symlinked files count when they lead inside the work folder; symlinked folders are not entered.
        try {
          const real = work.resolve(abs);
          if (fs.statSync(real).isFile()) files.push(abs);
        } catch {
          // Outside, dangling or unreadable: leave it out.
        }
      }
    }
  }
  files.sort();
  return { files, stopped: false };
}
