/**
 * The Docker API cannot kill a running exec, so each command runs under a small wrapper that
 * reports its process group first (one line on stderr, taken out before the output is passed
 * on) and then becomes the command. An abort execs `kill -TERM -PGID` in the container, then
 * `kill -KILL` a second later for whatever ignored TERM.
 *
 * Engines (runc, crun) start every exec'd process as a session leader, so the wrapper's pid is
 * its process group; where that is not so, the wrapper makes one with `setsid` (which does not
 * fork when the caller leads no group, so the pid stays the same).
 */

const MARK = 'corral-pgid:';

/**
 * With stdin, the command runs under a shell that afterwards reads whatever stdin it left
 * unread (both stay in the one process group). Podman needs this: when an exec ends with stdin
 * still unread, its attach socket is reset, and Podman then writes "Error: read unixpacket
 * ...: connection reset by peer" into the command's stderr and may drop the command's output
 * (about half the time for `head -c 5` fed 1 MB). Docker needs nothing, and loses nothing by it.
 * The shell's own stderr is /dev/null (the command gets the real one back through fd 3), so it
 * adds nothing to the output, such as "Killed" when the command dies of SIGKILL.
 */
const DRAINED = [
  'exec 3>&2 2>/dev/null',
  `/bin/sh -c 'exec 2>&3 3>&-; exec /bin/sh -c "$1"' sh "$1"`,
  'r=$?',
  'cat >/dev/null',
  'exit $r',
].join('\n');

/** argv for `sh -c command` under the wrapper; `drainStdin` when the exec is given stdin. */
export function wrappedCommand(command: string, opts: { drainStdin?: boolean } = {}): string[] {
  // The drained form's script is the wrapper's $2.
  const run = opts.drainStdin ? '/bin/sh -c "$2" sh "$1"' : '/bin/sh -c "$1"';
  const script = [
    `echo "${MARK}$$" >&2`,
    'g=; read -r _ _ _ _ g _ </proc/$$/stat 2>/dev/null',
    `if [ -n "$g" ] && [ "$g" != "$$" ] && command -v setsid >/dev/null 2>&1; then exec setsid ${run}; fi`,
    `exec ${run}`,
  ].join('\n');
  return ['/bin/sh', '-c', script, 'sh', command, ...(opts.drainStdin ? [DRAINED] : [])];
}

/** argv that kills process group `pgid` (TERM, then KILL after `graceMs`). */
export function killCommand(pgid: number, graceMs = 1000): string[] {
  const script = [
    'p=$1',
    'kill -TERM -$p 2>/dev/null || kill -TERM $p 2>/dev/null',
    `sleep ${(graceMs / 1000).toFixed(3)} 2>/dev/null || sleep 1`,
    'kill -KILL -$p 2>/dev/null || kill -KILL $p 2>/dev/null',
    'exit 0',
  ].join('\n');
  return ['/bin/sh', '-c', script, 'sh', String(pgid)];
}

/**
 * Filters a wrapped command's stderr: the first line is the wrapper's report, taken out; the
 * rest is passed on. A stderr that does not start with the report (the wrapper never ran, e.g.
 * the engine could not start the command) is passed on whole.
 */
export class PgidFilter {
  private pending: Buffer | null = Buffer.alloc(0);
  private resolvePgid!: (pgid: number | null) => void;
  /** The command's process group, or null once it is clear there will be none. */
  readonly pgid: Promise<number | null> = new Promise((r) => (this.resolvePgid = r));

  constructor(private readonly pass: (chunk: Buffer) => void) {}

  write(chunk: Buffer): void {
    if (this.pending === null) return this.pass(chunk);
    const buf = Buffer.concat([this.pending, chunk]);
    const nl = buf.indexOf(0x0a);
    const head = buf.subarray(0, nl < 0 ? buf.length : nl).toString('latin1');
    if (!MARK.startsWith(head.slice(0, MARK.length)) || (nl < 0 && buf.length > 64)) return this.giveUp(buf);
    if (nl < 0) {
      this.pending = buf;
      return;
    }
    const pgid = Number(head.slice(MARK.length));
    if (!head.startsWith(MARK) || !Number.isInteger(pgid) || pgid <= 1) return this.giveUp(buf);
    this.pending = null;
    this.resolvePgid(pgid);
    if (buf.length > nl + 1) this.pass(buf.subarray(nl + 1));
  }

  /** The stream ended. */
  end(): void {
    if (this.pending && this.pending.length > 0) this.pass(this.pending);
    this.pending = null;
    this.resolvePgid(null);
  }

  private giveUp(buf: Buffer): void {
    this.pending = null;
    this.resolvePgid(null);
    this.pass(buf);
  }
}
