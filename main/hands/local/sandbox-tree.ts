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

/** Whether `pid` still leads its own session (the same inner bwrap, not a reused number). */
function leadsSession(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(f[3]) === pid && f[0] !== 'Z' && f[0] !== 'X';
  } catch {
    return false;
  }
}

/**
 * Watches a sandboxed command's outer bwrap (`pid`) for the sandbox's own session, read off the
 * loop (fs.promises) every 25 ms until found or the command ends, so that its end can take that
 * session along. Needed even when nothing is interrupted: the runtime's wrapper starts its
 * socat bridges from subshells that its exit trap does not reach, and under load they were seen
 * outliving the command (parent 1) and keeping the namespace's init with them.
 */
export function watchSandboxSession(pid: number): { sessions(): number[]; end(): void } {
  const found = new Set<number>();
  let ended = false;
  let tries = 0;
  const look = async () => {
    while (!ended && found.size === 0 && tries++ < 400) {
      try {
        const text = await fs.promises.readFile(`/proc/${pid}/task/${pid}/children`, 'utf8');
        for (const c of text.trim().split(/\s+/).filter(Boolean).map(Number)) if (leadsSession(c)) found.add(c);
      } catch {
        return; // the outer bwrap is gone
      }
      if (found.size === 0) await new Promise((r) => setTimeout(r, 25));
    }
  };
  if (process.platform === 'linux') void look();
  return {
    sessions: () => [...found, ...sessionsBelow(pid)].filter((g, i, all) => all.indexOf(g) === i),
    end: () => {
      ended = true;
      signalGroups([...found].filter(leadsSession), 'SIGKILL');
    },
  };
}
