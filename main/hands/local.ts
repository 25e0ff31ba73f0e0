/**
 * The local hand: the built-in tools (bash, read, write, edit, glob, grep) run on this machine
 * in a per-session work folder. File tools never reach outside that folder; bash is one
 * long-lived shell per hand (persistent-bash.ts) whose running command an abort or timeout
 * stops, in a sandbox by default (local/sandbox.ts), with an allowlisted environment.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ProcessGroupLedger } from './pgroups';
import { localShell } from './local/shell-process';
import { PersistentBash } from './persistent-bash';
import { BUILTIN_TOOL_NAMES, isBuiltinTool } from './tools/definitions';
import { editTool, readTool, writeTool } from './local/files';
import { errorOutcome, InputError } from './tools/input';
import { PathError, WorkDir } from './local/paths';
import { describeNetwork, sandboxAvailability, wrap, type SandboxPolicy, type SandboxState } from './local/sandbox';
import { globTool, grepTool, type SearchOptions } from './local/search';
import type { ExecuteOptions, Hand, ToolOutcome } from './types';

export { DEFAULT_BASH_TIMEOUT_MS } from './persistent-bash';
export { commandEnv } from '../child-env';
export { PACKAGE_MANAGER_HOSTS, type SandboxPolicy, type SandboxState } from './local/sandbox';

export interface LocalHandOptions {
  /** The session's work folder; created if missing. */
  workDir: string;
  /** Most full output a bash call keeps for the UI, in bytes (default 64 MiB); the middle beyond it is dropped. */
  fullOutputLimitBytes?: number;
  /**
   * The sandbox bash runs in (default: one that denies only the usual secret stores and allows
   * no network), or `false` to run commands unsandboxed on purpose. Where no sandbox is
   * available, commands run unsandboxed and `sandboxState()` says why.
   */
  sandbox?: SandboxPolicy | false;
  /** Why the sandbox is off, when `sandbox` is false (for the hand's description). */
  sandboxOffReason?: string;
  /** The sandbox's temporary folder (TMPDIR), writable like the work folder; default: a fresh one, removed at dispose. */
  tmpDir?: string;
  /** Variables the environment config sets for commands. */
  env?: Record<string, string>;
  /** Where each command's process group is on record while it runs (for orphan killing). */
  ledger?: ProcessGroupLedger;
}

export interface LocalHand extends Hand {
  /** The work folder (absolute, as given). */
  readonly workDir: string;
  /** Whether commands run sandboxed, and if not, why (found once, at the first call or here). */
  sandboxState(): Promise<SandboxState>;
}

export function createLocalHand({ workDir, fullOutputLimitBytes, sandbox = { denyRead: [], allowedHosts: [] }, sandboxOffReason, tmpDir, env, ledger }: LocalHandOptions): LocalHand {
  const work = new WorkDir(workDir);
  let state: Promise<SandboxState> | undefined;
  const sandboxState = (): Promise<SandboxState> => {
    state ??= sandbox === false
      ? Promise.resolve({ enabled: false, reason: sandboxOffReason ?? 'the sandbox is turned off in the settings', on_purpose: true })
      : sandboxAvailability().then((a): SandboxState => {
          if (a.ok) return { enabled: true, network: describeNetwork(sandbox) };
          console.warn(`corral: commands in ${work.dir} run WITHOUT a sandbox: ${a.reason}`);
          return { enabled: false, reason: a.reason, on_purpose: false };
        });
    return state;
  };
  // The sandbox's TMPDIR: private to the hand, emptied when it is disposed.
  let madeTmp: string | undefined;
  const tmpOf = () => {
    if (!madeTmp) {
      if (tmpDir) fs.mkdirSync(tmpDir, { recursive: true, mode: 0o700 });
      madeTmp = tmpDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'corral-hand-tmp-'));
    }
    return madeTmp;
  };
  // One bash per hand, kept between calls (cd, variables, background jobs), as the reference
  // toolset's BashSession keeps one per session.
  const bash = new PersistentBash({
    cwd: work.dir,
    fullOutputLimitBytes,
    startShell: localShell({
      cwd: work.dir,
      env,
      ledger,
      sandbox:
        sandbox === false
          ? undefined
          : async (command) => {
              const s = await sandboxState();
              if (!s.enabled) return { file: 'sh', args: ['-c', command], release: () => {} };
              return wrap(command, { workDir: work.real, tmpDir: tmpOf(), policy: sandbox });
            },
    }),
  });
  let disposed = false;

  // Aborted when the hand is disposed: stops its searches running on worker threads.
  const disposing = new AbortController();
  const fileTools: Record<string, (w: WorkDir, input: Record<string, unknown>, opts: SearchOptions) => Promise<ToolOutcome>> = {
    read: readTool,
    write: writeTool,
    edit: editTool,
    glob: globTool,
    grep: grepTool,
  };

  return {
    tools: BUILTIN_TOOL_NAMES,
    workDir: work.dir,
    sandboxState,

    async execute(name: string, input: Record<string, unknown>, opts: ExecuteOptions = {}): Promise<ToolOutcome> {
      if (disposed) return errorOutcome(`This hand has been shut down; ${name} was not run.`);
      if (!isBuiltinTool(name)) {
        return errorOutcome(`Unknown tool "${name}". This hand answers: ${BUILTIN_TOOL_NAMES.join(', ')}.`);
      }
      if (typeof input !== 'object' || input === null || Array.isArray(input)) {
        return errorOutcome(`Invalid input for ${name}: expected an object of named fields.`);
      }
      try {
        if (name === 'bash') return await bash.run(input, opts);
        if (opts.signal?.aborted) return errorOutcome(`[interrupted: the call was aborted before ${name} ran]`, { interrupted: true });
        return await fileTools[name]!(work, input, { signal: opts.signal, timeoutMs: opts.timeoutMs, shutdown: disposing.signal });
      } catch (err) {
        if (err instanceof InputError || err instanceof PathError) return errorOutcome(err.message);
        const sys = err as NodeJS.ErrnoException;
        if (typeof sys.code === 'string') return errorOutcome(`${name} failed: ${sys.message}`, { code: sys.code });
        throw err;
      }
    },

    async dispose(): Promise<void> {
      disposed = true;
      disposing.abort();
      await bash.dispose();
      if (madeTmp) fs.rmSync(madeTmp, { recursive: true, force: true });
    },
  };
}
