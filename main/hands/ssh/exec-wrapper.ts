/**
 * How a command is started on the host so that it can be killed as a whole: in a new session
 * (`setsid -w`, which waits and passes the exit status on), whose process group id the wrapper
 * reports as the first line of stderr, behind a marker. `PgidSniffer` takes that line out of
 * the stderr stream before anything reaches the caller, so the command's output is untouched.
 *
 * Without setsid on the host, the command runs in the session sshd made for the channel (sshd
 * calls setsid() for every non-pty session), whose group id is the same `$$`.
 */
import { shq } from '../remote/shell-hand';

const MARK = '\x1eCORRAL_PGID=';
const MARK_BYTES = Buffer.from(MARK, 'latin1');
/** Anything the login shell prints before the marker is passed through, up to this much. */
const MAX_PREFIX_BYTES = 64 * 1024;

/** What the host has, found once at connect. */
export interface HostTools {
  setsid: boolean;
  bash: boolean;
}

/**
 * The command line for the exec channel. The login shell only sees `exec …` with quoted
 * arguments; everything else runs in `sh`.
 */
export function wrapCommand(command: string, cwd: string, tools: HostTools): string {
  const shell = tools.bash ? 'bash' : 'sh';
  // The command runs as a child of this sh (the group leader), not exec'd: when the command is
  // killed by a signal, sh exits normally with 128+n, which setsid -w passes on as the status.
  const inner = `printf '\\036CORRAL_PGID=%s\\n' "$$" >&2; cd -- "$1" || exit 1; ${shell} -c "$2"; exit $?`;
  const start = tools.setsid ? 'exec setsid -w sh -c' : 'exec sh -c';
  return `${start} ${shq(inner)} corral ${shq(cwd)} ${shq(command)}`;
}

/** Two commands on a second channel: TERM the group now, KILL it a second later (detached, so the channel ends at once). */
export function killCommand(pgids: readonly number[], graceMs = 1000): string {
  const groups = pgids.map((p) => `-${Math.trunc(p)}`).join(' ');
  const secs = (graceMs / 1000).toFixed(1);
  return `kill -s TERM -- ${groups} 2>/dev/null; (sleep ${secs}; kill -s KILL -- ${groups}) </dev/null >/dev/null 2>&1 &`;
}

/** Finds and removes the marker line at the start of a stderr stream. */
export class PgidSniffer {
  private held: Buffer[] = [];
  private heldBytes = 0;
  private done = false;

  constructor(
    private readonly pass: (chunk: Buffer) => void,
    private readonly onPgid: (pgid: number) => void,
  ) {}

  /** True once the marker was seen (or given up on). */
  get settled(): boolean {
    return this.done;
  }

  push(chunk: Buffer): void {
    if (this.done) return this.pass(chunk);
    this.held.push(chunk);
    this.heldBytes += chunk.length;
    const buf = Buffer.concat(this.held);
    const at = buf.indexOf(MARK_BYTES);
    if (at >= 0) {
      const nl = buf.indexOf(0x0a, at);
      if (nl < 0) return; // the rest of the line is still on its way
      const pgid = Number(buf.subarray(at + MARK_BYTES.length, nl).toString('latin1'));
      this.finish();
      if (at > 0) this.pass(buf.subarray(0, at));
      if (Number.isInteger(pgid) && pgid > 1) this.onPgid(pgid);
      if (nl + 1 < buf.length) this.pass(buf.subarray(nl + 1));
      return;
    }
    if (this.heldBytes > MAX_PREFIX_BYTES) this.flush();
  }

  /** The stream ended (or we stop waiting): pass on whatever is held. */
  flush(): void {
    if (this.done) return;
    const buf = Buffer.concat(this.held);
    this.finish();
    if (buf.length) this.pass(buf);
  }

  private finish(): void {
    this.done = true;
    this.held = [];
    this.heldBytes = 0;
  }
}
