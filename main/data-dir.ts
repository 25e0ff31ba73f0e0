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

/**
 * Where per-session work folders go by default: `~/Corral/work` for the default data folder;
 * beside any other data folder (`DIR-work`), so that a data folder of its own (tests, a second
 * profile) gets work folders of its own. Never inside the data folder.
 */
export function defaultWorkRoot(dataDir: string, env: NodeJS.ProcessEnv = process.env): string {
  const data = path.resolve(dataDir);
  if (data === path.resolve(defaultDataDir(env))) return path.join(os.homedir(), 'Corral', 'work');
  return `${data}-work`;
}

/** `--work-root DIR`, else `CORRAL_WORK_ROOT`, else the default for the data folder. */
export function resolveWorkRoot(flag: string | undefined, dataDir: string, env: NodeJS.ProcessEnv = process.env): string {
  return path.resolve(flag ?? env.CORRAL_WORK_ROOT ?? defaultWorkRoot(dataDir, env));
}

/**
 * Makes the data folder private at host start: files created from now on are 0600 and folders
 * 0700 (umask 077), and what an older version left readable by others is made private (the
 * folder 0700; group and other permissions removed from everything in it, the owner's kept).
 */
export function secureDataDir(dataDir: string): void {
  process.umask(0o077);
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const fix = (p: string, st: fs.Stats) => {
    if ((st.mode & 0o077) !== 0) fs.chmodSync(p, st.mode & 0o7700);
  };
  fix(dataDir, fs.statSync(dataDir));
  const walk = (dir: string, depth: number) => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const p = path.join(dir, e.name);
      if (e.isSymbolicLink()) continue; // its mode is the target's: never follow out of the folder
      try {
        fix(p, fs.lstatSync(p));
      } catch {
        continue;
      }
      if (e.isDirectory() && depth < 8) walk(p, depth + 1);
    }
  };
  walk(dataDir, 0);
}
