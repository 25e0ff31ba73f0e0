/**
 * A shell started ahead, for a pooled hand: starting one (a `docker exec`, an SSH channel) costs
 * tens of milliseconds, which a session taking a warm hand would otherwise wait at its first
 * `bash` call. The first start afterwards adopts it (the session's folder and variables are
 * sent by ShellSession once adopted, as to any new shell); later starts, or one after it ended,
 * start a fresh shell.
 */
import type { ShellProcess, StartShell } from './shell-session';

/** A shell started ahead: `startShell` hands it out once; `close` ends it if never taken. */
export interface PrestartedShell {
  startShell: StartShell;
  close(): void;
}

type Handlers = Parameters<StartShell>[0];

/** Starts a shell now through `start`; undefined when it cannot (the hand still works, starting later). */
export async function prestartShell(start: StartShell): Promise<PrestartedShell | undefined> {
  let handlers: Handlers | undefined;
  let ended: string | undefined;
  let proc: ShellProcess;
  try {
    // Output before a session adopts it (start-up noise) has no reader: ShellSession discards it anyway.
    proc = await start({ onOutput: (c) => handlers?.onOutput(c), onExit: (r) => ((ended = r), handlers?.onExit(r)) });
  } catch {
    return undefined;
  }
  let given = false;
  return {
    startShell: async (h) => {
      if (given || ended !== undefined) return start(h);
      given = true;
      handlers = h;
      return proc;
    },
    close: () => {
      if (given) return;
      given = true;
      void proc.kill();
    },
  };
}
