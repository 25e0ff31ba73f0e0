/** Looking for processes by command line, for tests that check what a hand started or stopped. */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';

/**
 * The ids (one per line) of the processes whose command line matches `pattern`, or '' when none does.
 * `exact` matches the whole command line. Only pgrep's "no match" (exit 1) means none: any other failure
 * of pgrep throws, so that a pgrep that could not run never passes for "nothing is running".
 */
export function pgrep(pattern: string, exact = false): string {
  try {
    return execFileSync('pgrep', exact ? ['-f', '-x', pattern] : ['-f', pattern], { encoding: 'utf8' }).trim();
  } catch (e) {
    if ((e as { status?: number }).status === 1) return '';
    throw e;
  }
}

/** Is a process with this command line running (any process group, sandboxed or not)? */
export const isRunning = (pattern: string, exact = false): boolean => pgrep(pattern, exact) !== '';

/** The processes below `pid`, children before grandchildren (Linux /proc, parents read from each stat). */
export function descendants(pid: number): number[] {
  const byParent = new Map<number, number[]>();
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      byParent.set(ppid, [...(byParent.get(ppid) ?? []), Number(name)]);
    } catch {
      // gone meanwhile
    }
  }
  const out: number[] = [];
  const walk = (p: number) => (byParent.get(p) ?? []).forEach((c) => (out.push(c), walk(c)));
  walk(pid);
  return out;
}

/** Command lines of a process and everything under it (those that ended meanwhile are left out). */
export function treeCommands(pid: number): string[] {
  return [pid, ...descendants(pid)].flatMap((p) => {
    try {
      return [fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ')];
    } catch {
      return [];
    }
  });
}
