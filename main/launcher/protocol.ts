/**
 * What the host asks of its launcher (entry.ts): start a brain (its wire on fd 3), or run a
 * program whose output the host reads (git, tar).
 */
export type LauncherRequest =
  | {
      t: 'spawn';
      /** The host's number for this process. */
      id: number;
      /** The program (node, or Electron run as node) and its arguments. */
      file: string;
      args: string[];
      env: NodeJS.ProcessEnv;
      /** Set on the process as it starts (raising niceness needs no privilege). */
      niceness?: number;
    }
  | {
      t: 'run';
      id: number;
      file: string;
      args: string[];
      env: NodeJS.ProcessEnv;
      cwd?: string;
      niceness?: number;
    };

/**
 * What the launcher reports: a process started (a brain's socket, or a run's stdout, comes with
 * it; a run's stderr follows in 'stderr'), could not be started, or exited.
 */
export type LauncherReply =
  | { t: 'spawned'; id: number; pid: number }
  | { t: 'stderr'; id: number }
  | { t: 'failed'; id: number; error: string; code?: string }
  | { t: 'exit'; id: number; code: number | null; signal: NodeJS.Signals | null };
