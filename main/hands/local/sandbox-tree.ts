/**
 * The sandbox's own session below a command's recorded group (Linux). bubblewrap starts the
 * sandbox with `--new-session`: its first process (the PID namespace's init) and everything in it
 * form a session and process group of their own, which a signal to the command's group (the
 * outer bwrap) never reaches. When the outer bwrap died, the inner one was seen living on
 * (parent 1) with the runtime's socat bridges, its `--die-with-parent` notwithstanding; so a stop
 * signals that session's group too, found while the outer bwrap is still its parent.
 */
import fs from 'node:fs';

/** Children of `pid` that lead a session of their own (bubblewrap's inner process). */
export function sessionsBelow(pid: number): number[] {
  if (process.platform !== 'linux') return [];
  let children: number[];
  try {
    children = fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
  return children.filter((child) => {
    try {
      const stat = fs.readFileSync(`/proc/${child}/stat`, 'utf8');
      const sid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[3]);
      return sid === child;
    } catch {
      return false;
    }
  });
}

/** Signals each group in `pgids`, ignoring the ones already gone. */
export function signalGroups(pgids: Iterable<number>, signal: NodeJS.Signals): void {
  for (const g of pgids) {
    try {
      process.kill(-g, signal);
    } catch {
      // Already gone.
    }
  }
}
