/** What the host asks of its brain launcher (launcher-entry.ts). */
export interface LauncherRequest {
  t: 'spawn';
  /** The host's number for this brain. */
  id: number;
  /** The program (node, or Electron run as node) and its arguments. */
  file: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  /** Set on the brain as it starts (raising niceness needs no privilege). */
  niceness?: number;
}

/** What the launcher reports: a brain started (its socket comes with it), failed, or exited. */
export type LauncherReply =
  | { t: 'spawned'; id: number; pid: number }
  | { t: 'failed'; id: number; error: string }
  | { t: 'exit'; id: number; code: number | null; signal: NodeJS.Signals | null };
