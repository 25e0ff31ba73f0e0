/**
 * The persistent shell (shell-session.ts) on a remote hand: what every remote kind starts (one
 * SSH channel, one attached container exec, one adb shell stream kept open), and how its
 * signals travel. No remote kind can signal the shell through its own stream (sshd refuses
 * signals to non-root logins, the Docker API has none, adb's shell protocol has none), so the
 * launch reports the shell's process group on stderr first, and Ctrl-C or a kill is a short
 * `kill` command run beside it (a second channel, exec or stream).
 *
 * The shell leads its own process group: sshd and adbd start every session with setsid(),
 * container engines start every exec as a session leader; where that is not so, `setsid` makes
 * one (it does not fork when the caller leads no group, so the pid, and the report, stay true).
 */
import { SHELL_LAUNCH, shQuote, type ShellProcess, type StartShell } from '../shell-session';

const PGID_MARK = '\x1eCORRAL_SHELL_PGID=';

/** Runs as `sh -c PRE sh REPORT LAUNCH`: into a group of its own if need be, then REPORT. */
const PRE = [
  'g=; read -r _ _ _ _ g _ </proc/$$/stat 2>/dev/null',
  'if [ -n "$g" ] && [ "$g" != "$$" ] && command -v setsid >/dev/null 2>&1; then exec setsid sh -c "$1" sh "$2"; fi',
  'exec sh -c "$1" sh "$2"',
].join('\n');
/** Says the group (its own pid, now the group's id) on stderr, then becomes the shell. */
const REPORT = `printf '${PGID_MARK.replace('\x1e', '\\036')}%s\\n' "$$" >&2; exec sh -c "$1"`;

/** The shell's argv, for kinds that take one (container exec). */
export const REMOTE_SHELL_ARGV: readonly string[] = ['sh', '-c', PRE, 'sh', REPORT, SHELL_LAUNCH];

/**
 * The argv of a shell that also notes its group in `file`, for a kind that can have the group
 * signalled from there without starting anything (a container's init, docker/provision.ts). The
 * report says whether the note was written (` 1`) or not (` 0`: the kind signals as others do).
 */
export function remoteShellArgvNoting(file: string): readonly string[] {
  const note = `{ echo "$$" > ${shQuote(file)}; } 2>/dev/null && n=1 || n=0; `;
  const report = `${note}printf '${PGID_MARK.replace('\x1e', '\\036')}%s %s\\n' "$$" "$n" >&2; exec sh -c "$1"`;
  return ['sh', '-c', PRE, 'sh', report, SHELL_LAUNCH];
}
/** The shell's command line, for kinds that take one (SSH exec, adb shell). */
export const REMOTE_SHELL_COMMAND = `exec ${REMOTE_SHELL_ARGV.map(shQuote).join(' ')}`;

/** A command that sends `signal` to process group `pgid` (or the process, where it leads none). */
export function signalCommand(pgid: number, signal: 'INT' | 'KILL'): string {
  const p = Math.trunc(pgid);
  return `kill -${signal} -${p} 2>/dev/null || kill -${signal} ${p} 2>/dev/null; exit 0`;
}

/** Reads the shell's stderr: takes out its group report; the rest (startup chatter) is dropped. */
export class PgidReport {
  private text: string | undefined = '';
  private settle!: (pgid: number | undefined) => void;
  /** The shell's process group, or undefined once it is clear no report will come. */
  readonly pgid: Promise<number | undefined> = new Promise((r) => (this.settle = r));
  /** The shell noted its group where the kind can signal it from (remoteShellArgvNoting). */
  noted = false;

  push(chunk: Buffer): void {
    if (this.text === undefined) return;
    this.text += chunk.toString('latin1');
    const m = new RegExp(`${PGID_MARK}(\\d+)( [01])?\\n`).exec(this.text);
    if (m) {
      this.noted = m[2] === ' 1';
      this.settle(Number(m[1]));
      this.text = undefined;
    } else if (this.text.length > 64 * 1024) this.text = this.text.slice(-100);
  }

  end(): void {
    this.settle(undefined);
  }
}

/** What a remote kind gives for one persistent shell. */
export interface RemoteShellLink {
  write(data: string): void;
  /** Runs a short command on the hand beside the shell (a second channel or exec); never rejects. */
  runBeside(command: string): Promise<void>;
  /** Closes the shell's stream. */
  close(): void;
  /** The group the shell reported (PgidReport). */
  pgid: Promise<number | undefined>;
  /**
   * Sends Ctrl-C to the group the shell noted (remoteShellArgvNoting) without a second channel;
   * used once the report says the note was written. False when it could not be sent: Ctrl-C then
   * goes through runBeside, as it does for a shell that noted nothing.
   */
  signalNoted?: () => Promise<boolean>;
  /** Whether the shell's report said it noted its group (PgidReport.noted). */
  noted?: () => boolean;
}

/** Turns a remote kind's link into the ShellProcess the session speaks to. */
export function remoteShellProcess(link: RemoteShellLink): ShellProcess {
  let closed = false;
  return {
    write: (data) => {
      if (!closed) link.write(data);
    },
    async interrupt() {
      const pgid = await link.pgid;
      if (pgid === undefined || closed) return;
      if (link.signalNoted && link.noted?.() && (await link.signalNoted())) return;
      await link.runBeside(signalCommand(pgid, 'INT'));
    },
    async kill() {
      if (closed) return;
      closed = true;
      const pgid = await Promise.race([link.pgid, new Promise<undefined>((r) => setTimeout(() => r(undefined), 2_000).unref())]);
      // The shell and everything it started (background jobs stay in its group).
      if (pgid !== undefined) await link.runBeside(signalCommand(pgid, 'KILL'));
      link.close();
    },
  };
}

/** A kind's way to open the stream of one persistent shell. */
export type OpenShellStream = (handlers: {
  onStdout(chunk: Buffer): void;
  onStderr(chunk: Buffer): void;
  onExit(reason: string): void;
}) => Promise<Omit<RemoteShellLink, 'pgid' | 'noted'>>;

/** A StartShell for a remote kind, from how it opens the stream. */
export function remoteStartShell(open: OpenShellStream): StartShell {
  return async ({ onOutput, onExit }) => {
    const report = new PgidReport();
    let ended = false;
    const link = await open({
      onStdout: onOutput,
      onStderr: (c) => report.push(c),
      onExit: (reason) => {
        if (ended) return;
        ended = true;
        report.end();
        onExit(reason);
      },
    });
    return remoteShellProcess({ ...link, pgid: report.pgid, noted: () => report.noted });
  };
}
