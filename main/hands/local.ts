/**
 * The local hand: the built-in tools (bash, read, write, edit, glob, grep) run on this machine
 * in a per-session work folder. File tools never reach outside that folder; bash runs each
 * command in its own process group so an abort or timeout kills everything it started.
 */
import { BashRunner } from './local/bash';
import { BUILTIN_TOOL_NAMES, isBuiltinTool } from './tools/definitions';
import { editTool, readTool, writeTool } from './local/files';
import { errorOutcome, InputError } from './tools/input';
import { PathError, WorkDir } from './local/paths';
import { globTool, grepTool, type SearchOptions } from './local/search';
import type { ExecuteOptions, Hand, ToolOutcome } from './types';

export { DEFAULT_BASH_TIMEOUT_MS, SECRET_NAME, scrubbedEnv } from './local/bash';

export interface LocalHandOptions {
  /** The session's work folder; created if missing. */
  workDir: string;
  /** Most full output a bash call keeps for the UI, in bytes (default 64 MiB); the middle beyond it is dropped. */
  fullOutputLimitBytes?: number;
}

export interface LocalHand extends Hand {
  /** The work folder (absolute, as given). */
  readonly workDir: string;
}

export function createLocalHand({ workDir, fullOutputLimitBytes }: LocalHandOptions): LocalHand {
  const work = new WorkDir(workDir);
  const bash = new BashRunner(work, fullOutputLimitBytes);
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
    },
  };
}
