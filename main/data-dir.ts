import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** The OS's per-user app-data folder for Corral (the same one Electron's `userData` names). */
export function defaultDataDir(env: NodeJS.ProcessEnv = process.env, platform = process.platform): string {
  if (platform === 'win32') return path.join(env.APPDATA ?? path.join(os.homedir(), 'AppData', 'Roaming'), 'Corral');
  if (platform === 'darwin') return path.join(os.homedir(), 'Library', 'Application Support', 'Corral');
  return path.join(env.XDG_CONFIG_HOME ?? path.join(os.homedir(), '.config'), 'Corral');
}

/**
 * `--data DIR`, else `CORRAL_DATA`, else the OS default. An empty `CORRAL_DATA` counts as unset
 * (it would otherwise mean the current folder); an empty flag is the caller's error to report.
 */
export function resolveDataDir(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  return path.resolve(flag ?? (env.CORRAL_DATA || defaultDataDir(env)));
}

/**
 * What stands in the way of using `dir` as the data folder, without creating anything: the path
 * is a file, or a part of it is; undefined when it is (or can be made) a folder.
 */
export function dataDirProblem(dir: string): string | undefined {
  const stat = statOf(dir);
  if (stat) return stat.isDirectory() ? undefined : `the data folder ${dir} is a file, not a folder: give --data (or CORRAL_DATA) a folder`;
  // Missing: the nearest part of the path that exists must be a folder to make it in.
  for (let up = path.dirname(dir); ; up = path.dirname(up)) {
    const parent = statOf(up);
    if (parent) return parent.isDirectory() ? undefined : `the data folder ${dir} cannot be made: ${up} is a file; give --data (or CORRAL_DATA) another folder`;
    if (path.dirname(up) === up) return undefined;
  }
}

/** stat, or undefined where nothing is (also under a path part that is a file: ENOTDIR). */
function statOf(p: string): fs.Stats | undefined {
  try {
    return fs.statSync(p);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw err;
  }
}
