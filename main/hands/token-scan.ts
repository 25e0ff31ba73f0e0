/**
 * Finds what a recorded process group left running outside its own group (Linux). A sandboxed
 * command does not stay in the group the host recorded: bubblewrap starts it with
 * `--new-session`, so the sandbox's first process (the PID namespace's init) and everything under
 * it are in a session and group of their own, which `kill(-pgid)` of the recorded group never
 * reaches. bubblewrap's `--die-with-parent` usually takes them down with a killed host, but that
 * is a parent-death signal, which the kernel drops when a process changes credentials and which
 * does not fire when the parent is some other process; seen after CI runs, such sandboxes
 * lived on (parent 1) running their commands.
 *
 * Every process started for a recorded group inherits the group's token in its environment
 * (bubblewrap passes the environment through), so the next host finds them by it wherever they
 * are: the namespace's init among them, whose death ends every process of its namespace.
 */
import fs from 'node:fs';

/** Fields of /proc/<pid>/stat after the command name: state [0], pgrp [2], session [3]. */
function stat(pid: number): string[] | undefined {
  try {
    const text = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return text.slice(text.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** A process that carries one of the tokens, with its group and session. */
export interface TokenCarrier {
  pid: number;
  pgid: number;
  sid: number;
  token: string;
}

/**
 * The live processes (zombies aside) whose environment holds `NAME=<token>` for one of
 * `tokens`. One pass over /proc; processes whose environment cannot be read are skipped.
 */
export function findTokenCarriers(name: string, tokens: ReadonlySet<string>): TokenCarrier[] {
  if (process.platform !== 'linux' || tokens.size === 0) return [];
  let pids: string[];
  try {
    pids = fs.readdirSync('/proc').filter((n) => /^\d+$/.test(n));
  } catch {
    return [];
  }
  const prefix = `${name}=`;
  const out: TokenCarrier[] = [];
  for (const p of pids) {
    const pid = Number(p);
    if (pid === process.pid) continue;
    let environ: string;
    try {
      environ = fs.readFileSync(`/proc/${pid}/environ`, 'latin1');
    } catch {
      continue;
    }
    if (!environ.includes(prefix)) continue;
    const entry = environ.split('\0').find((e) => e.startsWith(prefix));
    const token = entry?.slice(prefix.length);
    if (!token || !tokens.has(token)) continue;
    const f = stat(pid);
    if (!f || f[0] === 'Z' || f[0] === 'X') continue;
    out.push({ pid, pgid: Number(f[2]), sid: Number(f[3]), token });
  }
  return out;
}

/**
 * Kills the carriers, their process groups and the groups of their sessions (the sandbox's own
 * session), never this process's own group or session. Returns the pids signalled.
 */
export function killCarriers(carriers: readonly TokenCarrier[]): number[] {
  const own = stat(process.pid);
  const ownGroup = Number(own?.[2]);
  const ownSession = Number(own?.[3]);
  const killed: number[] = [];
  const kill = (target: number) => {
    try {
      process.kill(target, 'SIGKILL');
      return true;
    } catch {
      return false; // gone meanwhile
    }
  };
  const groups = new Set<number>();
  for (const c of carriers) {
    if (kill(c.pid)) killed.push(c.pid);
    for (const g of [c.pgid, c.sid]) if (g > 1 && g !== ownGroup && g !== ownSession) groups.add(g);
  }
  for (const g of groups) kill(-g);
  return killed;
}
