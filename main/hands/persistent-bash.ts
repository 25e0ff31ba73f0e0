/**
 * The `bash` tool on a persistent shell (shell-session.ts), for every kind of hand: input
 * checks, one call at a time, timeouts and interrupts (the command stops, the shell stays),
 * `restart`, a fresh shell after the old one ended (and the first result then says its state
 * is gone), output capped for the model with the full output kept for the UI.
 */
import { StringDecoder } from 'node:string_decoder';
import { capHeld, droppedLine, FULL_OUTPUT_LIMIT_BYTES, heldPieces, OutputCollector } from './output-cap';
import { ShellSession, type CommandEnd, type StartShell } from './shell-session';
import type { ExecuteOptions, ToolOutcome } from './types';
import { errorOutcome, InputError, optBoolean, optNumber, optString } from './tools/input';

export const DEFAULT_BASH_TIMEOUT_MS = 120_000;
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Options of a hand's persistent bash. */
export interface PersistentBashOptions {
  /** Starts a shell (SHELL_LAUNCH) on the hand. */
  startShell: StartShell;
  /** The folder a new shell starts in. */
  cwd: string;
  /** `export K=V;` lines a new shell runs first (the environment config's variables). */
  exports?: string;
  fullOutputLimitBytes?: number;
  /**
   * A shell started and set up ahead (a pooled hand's, prestarted-shell.ts), given out once: the
   * first shell needed is this one, moved to `cwd` with `exports` (ShellSession.adopt).
   */
  adopt?: () => ShellSession | undefined;
  /** Set when this hand replaces one that was lost: the first result says the old shell's state is gone. */
  replacedLost?: string;
}

export class PersistentBash {
  private session: ShellSession | undefined;
  private starting: Promise<ShellSession> | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  /** Why the last shell ended, said once in the next result. */
  private lostNote: string | undefined;
  private disposed = false;

  constructor(private readonly o: PersistentBashOptions) {
    if (o.replacedLost) this.lostNote = `the hand was lost (${o.replacedLost}) and replaced`;
  }

  /** Runs one `bash` call; calls are queued, as they share one shell. */
  run(input: Record<string, unknown>, opts: ExecuteOptions): Promise<ToolOutcome> {
    const command = optString(input, 'command', 'bash');
    const restart = optBoolean(input, 'restart', 'bash');
    const inputTimeout = optNumber(input, 'timeout_ms', 'bash');
    if (inputTimeout !== undefined && inputTimeout < 0) throw new InputError('Invalid input for bash: "timeout_ms" must not be negative.');
    if (!restart && (command === undefined || command.trim() === '')) {
      throw new InputError('Invalid input for bash: "command" is required and must be a non-empty string.');
    }
    const limits = [opts.timeoutMs, inputTimeout].filter((n): n is number => n !== undefined && n > 0);
    const timeoutMs = Math.min(limits.length > 0 ? Math.min(...limits) : DEFAULT_BASH_TIMEOUT_MS, MAX_TIMER_MS);
    const next = this.queue.then(() => this.runNow(command, restart === true, timeoutMs, opts.signal));
    this.queue = next.catch(() => {});
    return next;
  }

  private async runNow(command: string | undefined, restart: boolean, timeoutMs: number, signal?: AbortSignal): Promise<ToolOutcome> {
    if (this.disposed) return errorOutcome('This hand has been shut down; bash was not run.');
    if (restart) {
      await this.session?.kill();
      this.session = undefined;
      this.lostNote = undefined;
      if (command === undefined || command.trim() === '') {
        return { content: 'bash session restarted: the next command runs in a fresh shell in the work folder.', isError: false, details: { restart: true } };
      }
    }
    if (signal?.aborted) {
      return errorOutcome('[interrupted: the call was aborted before the command started]', { exit_code: null, duration_ms: 0, interrupted: true });
    }
    const started = performance.now();
    let session: ShellSession;
    try {
      session = await this.shell();
    } catch (err) {
      return errorOutcome(`The command was not run: a shell could not be started (${(err as Error).message}).`, { shell_failed: true });
    }
    // Aborted while the shell was starting (a sandboxed first shell takes a moment): run nothing.
    if (signal?.aborted) {
      return errorOutcome('[interrupted: the call was aborted before the command started]', { exit_code: null, duration_ms: Math.round(performance.now() - started), interrupted: true });
    }
    const note = this.lostNote;
    this.lostNote = undefined;
    const limit = this.o.fullOutputLimitBytes ?? FULL_OUTPUT_LIMIT_BYTES;
    const collector = new OutputCollector(limit);
    const decoder = new StringDecoder('utf8');
    const stop = new AbortController();
    let why: 'abort' | 'timeout' | undefined;
    const onAbort = () => ((why ??= 'abort'), stop.abort());
    signal?.addEventListener('abort', onAbort, { once: true });
    const timer = setTimeout(() => ((why ??= 'timeout'), stop.abort()), timeoutMs);
    let end: CommandEnd;
    try {
      end = await session.run(command!, (c) => collector.push(decoder.write(c), c.length), stop.signal);
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    }
    collector.push(decoder.end());
    if (end.kind === 'killed' || end.kind === 'shell_exited') {
      this.session = undefined;
      this.lostNote = end.kind === 'killed' ? 'the previous command ignored SIGINT, so its shell was killed' : `the previous shell ended (${end.kind === 'shell_exited' ? end.reason : ''})`;
    }
    if (this.disposed) return this.outcome(collector, { kind: 'shell_exited', reason: 'the hand was shut down' }, { started, timeoutMs, why: 'dispose', note, limit });
    return this.outcome(collector, end, { started, timeoutMs, why, note, limit });
  }

  private async shell(): Promise<ShellSession> {
    if (this.session && !this.session.exitReason) return this.session;
    if (this.session?.exitReason) {
      this.lostNote ??= `the previous shell ended (${this.session.exitReason})`;
      this.session = undefined;
    }
    const ahead = this.o.adopt?.();
    if (ahead) {
      ahead.adopt({ cwd: this.o.cwd, exports: this.o.exports });
      this.session = ahead;
      return ahead;
    }
    // A first sandboxed shell right after the sandbox came up has been seen to never answer: one more try.
    const start = () => ShellSession.start(this.o.startShell, { cwd: this.o.cwd, exports: this.o.exports });
    this.starting ??= start()
      .catch(() => start())
      .finally(() => (this.starting = undefined));
    this.session = await this.starting;
    return this.session;
  }

  private outcome(
    collector: OutputCollector,
    end: CommandEnd,
    s: { started: number; timeoutMs: number; why: 'abort' | 'timeout' | 'dispose' | undefined; note: string | undefined; limit: number },
  ): ToolOutcome {
    // As pieces: up to 64 MiB, never joined here (output-cap.ts); the model's copy is made from its ends.
    const out = collector.held();
    const duration_ms = Math.round(performance.now() - s.started);
    const stopped = s.why === 'timeout' ? `timed out after ${s.timeoutMs.toLocaleString('en-US')} ms` : `interrupted: the call was aborted after ${duration_ms.toLocaleString('en-US')} ms`;
    let status: string;
    switch (end.kind) {
      case 'exit':
        status = `[exit code ${end.code}]`;
        break;
      case 'interrupted':
        status = `[${stopped}; the command was stopped with SIGINT (exit code ${end.code}); the shell and its state are kept]`;
        break;
      case 'killed':
        status = `[${stopped}; the command did not stop on SIGINT, so the shell was killed: the next call starts a fresh shell (working folder, variables and background jobs are lost)]`;
        break;
      default:
        status = s.why === 'dispose'
          ? '[the hand was shut down during the command: the shell and everything it started were killed]'
          : s.why
          ? `[${stopped}; the shell ended: the next call starts a fresh shell]`
          : `[the shell ended (${end.reason}): the next call starts a fresh shell (working folder, variables and background jobs are lost)]`;
    }
    const cap = capHeld(out);
    const nl = (t: string) => (t === '' || t.endsWith('\n') ? '' : '\n');
    const prefix = s.note ? `[a fresh shell: ${s.note}; its working folder, variables and background jobs are gone]\n` : '';
    const content = prefix + cap.content + nl(cap.content) + status;
    const details: Record<string, unknown> = {
      exit_code: end.kind === 'exit' || end.kind === 'interrupted' ? end.code : null,
      signal: end.kind === 'interrupted' ? 'INT' : end.kind === 'killed' ? 'KILL' : null,
      duration_ms,
      output_chars: out.totalChars,
      output_bytes: out.totalBytes,
      truncated: cap.truncated,
    };
    if (s.why === 'timeout') details.timed_out = true;
    if (s.why === 'abort' || s.why === 'dispose') details.interrupted = true;
    if (s.note) details.fresh_shell = s.note;
    if (end.kind === 'killed' || end.kind === 'shell_exited') details.shell_ended = true;
    const outcome: ToolOutcome = { content, isError: s.why !== undefined || end.kind === 'killed' || end.kind === 'shell_exited', details };
    if (cap.truncated) {
      if (out.droppedBytes > 0) {
        details.full_output_dropped_bytes = out.droppedBytes;
        details.full_output_note = `The full output was ${out.totalBytes.toLocaleString('en-US')} bytes; its middle (${out.droppedBytes.toLocaleString('en-US')} bytes) was dropped to keep at most ${(s.limit / 1024 / 1024).toLocaleString('en-US')} MiB.`;
      }
      outcome.fullOutput = heldPieces(out, { before: prefix, droppedNote: droppedLine(out.droppedBytes, s.limit), after: status });
    }
    return outcome;
  }

  /** Kills the shell and everything it started. */
  async dispose(): Promise<void> {
    this.disposed = true;
    // A shell started ahead and never used goes too.
    const s = this.session ?? (await this.starting?.catch(() => undefined)) ?? this.o.adopt?.();
    this.session = undefined;
    await s?.kill();
  }
}
