/**
 * Blanks secret values in this process's *initial* environment, the copy Linux shows to every
 * process of the same user in /proc/PID/environ (deleting from `process.env` does not touch it).
 * serve's launching process needs this: it re-executes serve without the keys, but it stays
 * alive to pass on signals and the exit code, and its own environment still held them (a
 * hostile command found them there by reading every /proc/<pid>/environ).
 *
 * The kernel reads that copy from the process's memory between env_start and env_end
 * (/proc/self/stat fields 50 and 51); a process may write its own memory through /proc/self/mem,
 * so each `NAME=value` of `names` becomes `NAME=` followed by NUL bytes.
 */
import fs from 'node:fs';

/** Blanks the values of `names` in the initial environment. Returns what happened, for the log. */
export function scrubInitialEnviron(names: readonly string[]): { scrubbed: string[] } | { problem: string } {
  if (process.platform !== 'linux') return { scrubbed: [] };
  let fd: number | undefined;
  try {
    const stat = fs.readFileSync('/proc/self/stat', 'utf8');
    // Fields after "(comm) " start at field 3; env_start is field 50, env_end field 51 (proc(5)).
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const start = Number(fields[50 - 3]);
    const end = Number(fields[51 - 3]);
    if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || end <= start) return { problem: 'no environment bounds in /proc/self/stat' };
    fd = fs.openSync('/proc/self/mem', 'r+');
    const region = Buffer.alloc(end - start);
    fs.readSync(fd, region, 0, region.length, start);
    const scrubbed: string[] = [];
    let at = 0;
    while (at < region.length) {
      let nul = region.indexOf(0, at);
      if (nul < 0) nul = region.length;
      const entry = region.subarray(at, nul);
      const eq = entry.indexOf(0x3d); // '='
      const name = eq > 0 ? entry.subarray(0, eq).toString('latin1') : '';
      if (names.includes(name) && nul > at + eq + 1) {
        const blank = Buffer.alloc(nul - (at + eq + 1));
        fs.writeSync(fd, blank, 0, blank.length, start + at + eq + 1);
        scrubbed.push(name);
      }
      at = nul + 1;
    }
    return { scrubbed };
  } catch (err) {
    return { problem: (err as Error).message };
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}
