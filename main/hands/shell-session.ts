/**
 * One long-lived shell per hand, as the reference toolset's `BashSession` keeps: the working
 * folder, variables, functions and background jobs of one `bash` call are there for the next.
 * The transport (a local process, an SSH channel, a container exec, an adb shell) only carries
 * bytes and signals; the protocol is here, the same for every kind of hand.
 *
 * The shell is `bash -i` (or `sh -i` where there is no bash), reading commands from a pipe.
 * Interactive on purpose: on SIGINT to its process group an interactive shell does what a
 * terminal's Ctrl-C does, it stops the foreground command *and the rest of its list* and goes
 * back to reading the next command, alive, with its state. Without job control (there is no
 * terminal), background jobs ignore SIGINT, so they survive too. A command that ignores SIGINT
 * is dealt with by killing the whole shell, and the result says the state is lost.
 *
 * Each command is sent as `{ eval 'CMD'\n} </dev/null 2>&1;` (after a syntax check), printf '\n\036CORRAL_<nonce>_%d\n' $?`:
 * eval keeps an unbalanced quote from swallowing the framing, </dev/null keeps a command from
 * reading the protocol, and the per-call random nonce keeps output from faking the end marker.
 */
import { randomBytes } from 'node:crypto';

/** Quotes a string for any POSIX shell. */
export const shQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** The command line that starts the shell (run by `sh -c` or exec'd by a transport). */
export const SHELL_LAUNCH =
  'unset ENV BASH_ENV; export PS1= PS2=; if command -v bash >/dev/null 2>&1; then exec bash --norc --noprofile --noediting -i; fi; exec sh -i';

/** What a transport gives: a running shell's stdin and its signals. */
export interface ShellProcess {
  write(data: string): void;
  /** Sends SIGINT to the shell's process group (a terminal's Ctrl-C). */
  interrupt(): Promise<void>;
  /** Kills the shell and everything it started; never rejects. */
  kill(): Promise<void>;
  /** Told once the shell answered its first marker (its process tree is settled, no command runs yet). */
  ready?(): void;
}

/** Starts a shell running SHELL_LAUNCH; output (stdout, and stderr if the transport merges it) goes to onOutput. */
export type StartShell = (handlers: { onOutput(chunk: Buffer): void; onExit(reason: string): void }) => Promise<ShellProcess>;

/** How one command ended. */
export type CommandEnd =
  | { kind: 'exit'; code: number }
  /** Stopped by SIGINT; the shell lives on with its state. */
  | { kind: 'interrupted'; code: number }
  /** Did not stop on SIGINT: the shell was killed, its state is lost. */
  | { kind: 'killed' }
  /** The shell itself ended during the command (`exit`, or the hand went away). */
  | { kind: 'shell_exited'; reason: string };

const MARK = 0x1e;
const MARK_RE = /^\x1eCORRAL_([0-9a-f]+)_(-?\d+)\n/;
/** After SIGINT, how long the shell gets to come back before it is killed. */
export const INTERRUPT_GRACE_MS = 1_000;
/** How long a new shell gets to answer its first marker. */
const START_TIMEOUT_MS = 8_000;

/** A running shell speaking the marker protocol. One command at a time (callers queue). */
export class ShellSession {
  private proc: ShellProcess | undefined;
  private pending = Buffer.alloc(0);
  private sink: ((chunk: Buffer) => void) | undefined;
  private waiting: { nonces: string[]; resolve(code: number | string): void } | undefined;
  /** Set once the shell has ended: why. */
  exitReason: string | undefined;
  /** The shell is bash (not another sh). */
  private bash = false;

  private constructor() {}

  /** Starts a shell in `cwd` with `exports` (lines of `export K=V`) and waits until it answers. */
  static async start(startShell: StartShell, init: { cwd: string; exports?: string }): Promise<ShellSession> {
    const s = new ShellSession();
    s.proc = await startShell({ onOutput: (c) => s.onOutput(c), onExit: (r) => s.onExit(r) });
    if (s.exitReason) throw new Error(`the shell ended at once: ${s.exitReason}`);
    const nonce = newNonce();
    // Startup noise (job-control warnings, banners) goes to the discarded sink until the first marker.
    s.sink = () => {};
    const ready = s.waitFor([nonce]);
    // The first marker's status says whether the shell is bash (0) or another sh (1).
    s.proc.write(
      `exec 2>/dev/null; PS1=''; PS2=''; unset HISTFILE; if [ -n "$BASH_VERSION" ]; then set +H; fi; cd -- ${shQuote(init.cwd)} ; ${init.exports ?? ''}\n[ -n "$BASH_VERSION" ]\n` +
        markerLine(nonce),
    );
    const timer = setTimeout(() => s.waiting?.resolve('the shell did not answer'), START_TIMEOUT_MS);
    const r = await ready.finally(() => clearTimeout(timer));
    if (typeof r === 'string') {
      await s.kill();
      throw new Error(r);
    }
    s.bash = r === 0;
    s.proc.ready?.();
    return s;
  }

  /**
   * Gives a shell started (and set up) ahead to its user: moves it to `init`'s folder and sets
   * its variables, as start would have. Sent without a marker of its own: the shell reads it
   * before the next command, so the first command goes out without waiting a round trip more.
   * Its output, like start-up's, is not the command's (it goes nowhere).
   */
  adopt(init: { cwd: string; exports?: string }): void {
    if (this.exitReason) return;
    this.proc!.write(`cd -- ${shQuote(init.cwd)} >/dev/null 2>&1; ${init.exports ?? ''}\n`);
  }

  /** Runs one command; output goes to `onOutput` as it comes (read each chunk during the call: it is not a copy). Stops it when `stop` is aborted. */
  async run(command: string, onOutput: (chunk: Buffer) => void, stop: AbortSignal): Promise<CommandEnd> {
    if (this.exitReason) return { kind: 'shell_exited', reason: this.exitReason };
    const nonce = newNonce();
    this.sink = onOutput;
    const done = this.waitFor([nonce]);
    // bash sources the command, wrapped in `{ …\n}` as the reference toolset wraps it, from a
    // here-string: bash parses the whole group before it runs any of it, so a syntax error on any
    // line runs nothing, and a syntax error in a sourced file only ends the `.` (status 2), where
    // in an `eval` it would make an interactive shell throw away the input that follows (the
    // marker: the call would never end). While it reads a sourced file an interactive bash does
    // not print the "[1] 12345" of each background job. No second process checks the syntax
    // first: a fork and exec of bash cost 5–10 ms per call on our test machines.
    // Another sh has no such `.` of a here-string: there a non-interactive shell checks first.
    this.proc!.write(
      this.bash
        ? `__corral_c=${shQuote(`{ ${command}\n}`)}; { . /dev/fd/3 3<<<"$__corral_c"\n} </dev/null 2>&1; ${markerLine(nonce)}`
        : `__corral_c=${shQuote(command)}; { if command "\${BASH:-sh}" -n -c "$__corral_c"; then eval "$__corral_c"; else (exit 2); fi\n} </dev/null 2>&1; ${markerLine(nonce)}`,
    );
    const stopped = new Promise<'stop'>((r) => (stop.aborted ? r('stop') : stop.addEventListener('abort', () => r('stop'), { once: true })));
    const first = await Promise.race([done, stopped]);
    if (first !== 'stop') return this.ended(first);
    // Ctrl-C: the shell drops the rest of the command and reads the next line, a new marker.
    const again = newNonce();
    this.waiting!.nonces.push(again);
    await this.proc!.interrupt();
    if (!this.exitReason) this.proc!.write(`\n${markerLine(again)}`);
    let timer: NodeJS.Timeout | undefined;
    const r = await Promise.race([done, new Promise<'late'>((res) => (timer = setTimeout(() => res('late'), INTERRUPT_GRACE_MS)))]);
    clearTimeout(timer);
    if (r === 'late') {
      await this.kill();
      return { kind: 'killed' };
    }
    const end = this.ended(r);
    return end.kind === 'exit' ? { kind: 'interrupted', code: end.code } : end;
  }

  /** Kills the shell and all it started. */
  async kill(): Promise<void> {
    this.exitReason ??= 'killed';
    this.waiting?.resolve(this.exitReason);
    await this.proc?.kill();
  }

  private ended(r: number | string): CommandEnd {
    this.sink = undefined;
    return typeof r === 'number' ? { kind: 'exit', code: r } : { kind: 'shell_exited', reason: r };
  }

  private waitFor(nonces: string[]): Promise<number | string> {
    return new Promise((resolve) => {
      this.waiting = {
        nonces,
        resolve: (v) => {
          this.waiting = undefined;
          resolve(v);
        },
      };
    });
  }

  private onExit(reason: string): void {
    this.exitReason ??= reason;
    // Whatever was held back is output after all.
    if (this.pending.length) this.sink?.(this.pending);
    this.pending = Buffer.alloc(0);
    this.waiting?.resolve(this.exitReason);
  }

  /**
   * Passes output on, holding back what could be the start of a marker (from a 0x1e byte) and
   * one trailing newline (the marker line starts with one of its own).
   */
  private onOutput(chunk: Buffer): void {
    // A held newline that no marker follows is the command's: passed on alone, so that a flood of
    // output is not copied once more chunk by chunk to join it.
    if (this.pending.length === 1 && this.pending[0] === 0x0a && chunk.length > 0 && chunk[0] !== MARK) {
      this.emit(this.pending, false);
      this.pending = Buffer.alloc(0);
    }
    let buf = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    for (;;) {
      const at = buf.indexOf(MARK);
      if (at < 0) break;
      const nl = buf.indexOf(0x0a, at);
      if (nl < 0 && buf.length - at < 80) {
        this.emit(buf.subarray(0, at), false);
        this.pending = Buffer.from(buf.subarray(at));
        return;
      }
      const m = MARK_RE.exec(buf.subarray(at, nl < 0 ? at + 80 : nl + 1).toString('latin1'));
      if (!m) {
        this.emit(buf.subarray(0, at + 1), true);
        buf = buf.subarray(at + 1);
        continue;
      }
      // The newline the marker line starts with is not the command's.
      const before = at > 0 && buf[at - 1] === 0x0a ? buf.subarray(0, at - 1) : buf.subarray(0, at);
      this.emit(before, true);
      buf = buf.subarray(nl + 1);
      if (this.waiting?.nonces.includes(m[1]!)) this.waiting.resolve(Number(m[2]));
      // A marker of an earlier, interrupted command is dropped.
    }
    // Hold a trailing newline: it may be the marker's.
    if (buf.length && buf[buf.length - 1] === 0x0a) {
      this.emit(buf.subarray(0, buf.length - 1), false);
      this.pending = Buffer.from([0x0a]);
    } else {
      this.emit(buf, false);
      this.pending = Buffer.alloc(0);
    }
  }

  /** Passes `b` on uncopied: it may be a view of a transport's buffer, so the sink reads it at once (persistent-bash decodes it). */
  private emit(b: Buffer, _final: boolean): void {
    if (b.length) this.sink?.(b);
  }
}

function newNonce(): string {
  return randomBytes(8).toString('hex');
}

function markerLine(nonce: string): string {
  return `printf '\\n\\036CORRAL_%s_%d\\n' ${nonce} $?\n`;
}
