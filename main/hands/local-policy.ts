/**
 * Where local hands may work and what their sandbox allows, from the host's settings and an
 * environment's `local` config: per-session work folders under a work root outside the data
 * folder; a `working_dir` only inside the roots the host allows; the sandbox's deny list and
 * network allow list.
 */
import os from 'node:os';
import path from 'node:path';
import { realish } from './local/paths';
import { deniedSecretPaths, describeNetwork, PACKAGE_MANAGER_HOSTS, type SandboxPolicy, type SandboxState } from './local/sandbox';

export interface LocalPlaces {
  /** The host's data folder (database, key, outputs): never readable by a sandboxed command. */
  dataDir: string;
  /** Per-session work folders live here (`<workRoot>/<session>`); outside the data folder. */
  workRoot: string;
  /** Further folders a `local` environment's `working_dir` may lie in (or be). */
  allowedWorkRoots?: readonly string[];
}

const within = (root: string, p: string) => p === root || p.startsWith(root.endsWith(path.sep) ? root : root + path.sep);
const real = (p: string) => realish(path.resolve(p));

/** Refuses a work root inside (or holding) the data folder. */
export function checkWorkRoot(places: LocalPlaces): void {
  const data = real(places.dataDir);
  const root = real(places.workRoot);
  if (within(data, root) || within(root, data)) {
    throw new Error(`the work root ${places.workRoot} and the data folder ${places.dataDir} must not contain one another: commands in work folders must not reach the data folder`);
  }
}

/**
 * Why a `local` environment may not use `dir` as its working_dir, or undefined when it may. It
 * must be an absolute path strictly inside the work root or inside (or at) an allowed root, and
 * it may not hold or lie in the data folder, the work root or a secret store.
 */
export function workingDirProblem(places: LocalPlaces, dir: unknown): string | undefined {
  if (typeof dir !== 'string' || dir.includes('\0')) return 'must be a string without NUL characters';
  if (!path.isAbsolute(dir)) return `'${dir}' must be an absolute path`;
  let at: string;
  try {
    at = real(dir);
  } catch (err) {
    return `'${dir}' cannot be resolved: ${(err as Error).message}`;
  }
  const workRoot = real(places.workRoot);
  const extra = (places.allowedWorkRoots ?? []).map(real);
  const allowed = (at !== workRoot && within(workRoot, at)) || extra.some((r) => within(r, at));
  if (!allowed) {
    const roots = [`inside ${places.workRoot}`, ...(places.allowedWorkRoots ?? [])].join(', ');
    return `'${dir}' is outside the folders local environments may use (${roots})`;
  }
  const data = real(places.dataDir);
  if (within(data, at) || within(at, data)) return `'${dir}' overlaps the data folder`;
  if (within(at, workRoot)) return `'${dir}' holds the work root, and with it every session's work folder`;
  for (const secret of deniedSecretPaths(os.homedir()).map(real)) {
    if (within(secret, at) || within(at, secret)) return `'${dir}' overlaps ${secret}, which hands may not read`;
  }
  return undefined;
}

/** The local config's fields this module reads. */
export interface LocalConfig {
  sandbox?: unknown;
  networking?: { allowed_hosts?: string[] | null; allow_package_managers?: boolean | null } | null;
}

/** The sandbox of a local hand: the data folder and every session's folder hidden; the hosts its config allows. */
export function sandboxPolicy(places: LocalPlaces, config: LocalConfig): SandboxPolicy {
  const net = config.networking;
  const hosts = [...(net?.allow_package_managers === false ? [] : PACKAGE_MANAGER_HOSTS), ...(net?.allowed_hosts ?? [])];
  return {
    // The hand's own folder (and temporary folder) is bound back in, writable, over these.
    denyRead: [places.dataDir, places.workRoot],
    allowedHosts: [...new Set(hosts)],
  };
}

/** One line for people and the model: where the hand works and whether it is sandboxed. */
export function describeLocal(workDir: string, state: SandboxState | undefined): string {
  const base = `this machine, folder ${workDir}`;
  if (!state) return base;
  if (state.enabled) return `${base} (sandboxed: writes only here, ${state.network})`;
  return `${base} (NOT sandboxed: ${state.reason})`;
}

/** What the model is told about a sandboxed or unsandboxed local hand, beyond the bash tool's own text. */
export function sandboxNotice(state: SandboxState | undefined): string | undefined {
  if (!state) return undefined;
  if (state.enabled) {
    return `Commands run in a sandbox: only the work folder (and $TMPDIR) is writable, other sessions' folders, the host's data and secret stores are hidden, ${state.network}, and background jobs end when the call that started them returns.`;
  }
  return `Commands on this machine run WITHOUT a sandbox (${state.reason}).`;
}

export { describeNetwork };
