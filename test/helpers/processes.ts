/** Looking for processes by command line, for tests that check what a hand started or stopped. */
import { execFileSync } from 'node:child_process';

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
