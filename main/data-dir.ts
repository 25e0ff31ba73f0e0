import os from 'node:os';
import path from 'node:path';

/** The OS's per-user app-data folder for Corral (the same one Electron's `userData` names). */
export function defaultDataDir(env: NodeJS.ProcessEnv = process.env, platform = process.platform): string {
  if (platform === 'win32') return path.join(env.APPDATA ?? path.join(os.homedir(), 'AppData', 'Roaming'), 'Corral');
  if (platform === 'darwin') return path.join(os.homedir(), 'Library', 'Application Support', 'Corral');
  return path.join(env.XDG_CONFIG_HOME ?? path.join(os.homedir(), '.config'), 'Corral');
}

/** `--data DIR`, else `CORRAL_DATA`, else the OS default. */
export function resolveDataDir(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  return path.resolve(flag ?? env.CORRAL_DATA ?? defaultDataDir(env));
}
