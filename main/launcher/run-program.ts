/**
 * Runs a program of this machine for the host (git, tar) without starting it on the host's
 * event loop: the shared launcher (entry.ts) starts it and passes its stdout and stderr pipes
 * back, so the host only reads. Where handles cannot be passed (Windows), the host spawns it.
 */
import { spawn } from 'node:child_process';
import os from 'node:os';
import type { Readable } from 'node:stream';
import { LAUNCHER_SUPPORTED, LauncherProcess } from './launcher-process';
import type { LauncherReply } from './protocol';

/** How to run a program, and where its output goes. */
export interface RunProgramOptions {
  env: NodeJS.ProcessEnv;
  cwd?: string;
  /**
   * Set on the process just after it starts (work done ahead of need gives way to sessions');
   * a helper it starts in its first moments may keep normal priority.
   */
  niceness?: number;
  /** Ends it (SIGTERM); the result then says `aborted`. */
  signal?: AbortSignal;
  /** Ends it (SIGTERM) after this long; the result then says `timedOut`. */
  timeoutMs?: number;
  onStdout(chunk: Buffer): void;
  onStderr(chunk: Buffer): void;
  /** 'direct' spawns from this process (what Windows gets); for tests and comparisons. */
  via?: 'launcher' | 'direct';
}

/** How a run ended, once it has exited and its output has been read to the end. */
export interface RunEnd {
  code: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  aborted: boolean;
}

/** A run under way: its end, and a way to end it early. */
export interface RunningProgram {
  /** Rejects when the program could not start (the error's `code` is the errno, e.g. ENOENT). */
  done: Promise<RunEnd>;
  kill(signal?: NodeJS.Signals): void;
}

let shared: LauncherProcess | undefined;

/** Whether a run leads a process group (detached on Windows would open a console window). */
const GROUPS = process.platform !== 'win32';

/**
 * How long a run's pipes may stay open after it has exited (a helper it left behind holds
 * them) before they are closed and the run ends with what was read.
 */
const PIPES_AFTER_EXIT_MS = 2000;

/** How long a program asked to end (SIGTERM) may take before it is killed. */
const KILL_GRACE_MS = 5000;

/** Starts `file args`; see RunProgramOptions. */
export function runProgram(file: string, args: string[], o: RunProgramOptions): RunningProgram {
  const run = new Run(o);
  if (o.signal?.aborted) return (run.finishAborted(), run);
  if ((o.via ?? 'launcher') === 'direct' || !LAUNCHER_SUPPORTED) run.startDirect(file, args);
  else run.startLaunched((shared ??= new LauncherProcess(false)), file, args);
  return run;
}

class Run implements RunningProgram {
  done: Promise<RunEnd>;
  private resolve!: (end: RunEnd) => void;
  private reject!: (err: Error) => void;
  private pid?: number;
  private killWish?: NodeJS.Signals;
  private exit?: { code: number | null; signal: NodeJS.Signals | null };
  private open = 2;
  private timedOut = false;
  private aborted = false;
  private settled = false;
  private timer?: NodeJS.Timeout;
  private pipesTimer?: NodeJS.Timeout;
  private killTimer?: NodeJS.Timeout;
  private readonly streams: Readable[] = [];
  private onAbort = () => {
    this.aborted = true;
    this.end();
  };
  private cleanup: () => void = () => {};

  constructor(private readonly o: RunProgramOptions) {
    this.done = new Promise((res, rej) => ((this.resolve = res), (this.reject = rej)));
  }

  kill(signal: NodeJS.Signals = 'SIGTERM'): void {
    if (this.exit || this.settled) return;
    if (this.pid === undefined) return void (this.killWish = this.killWish === 'SIGKILL' ? 'SIGKILL' : signal);
    try {
      // Its process group (it leads one, except on Windows): helpers it started end with it.
      process.kill(GROUPS ? -this.pid : this.pid, signal);
    } catch {
      // Gone already: its exit is on its way.
    }
  }

  /** SIGTERM, then SIGKILL if it has not exited after a grace period. */
  private end(): void {
    this.kill('SIGTERM');
    if (!this.killTimer) (this.killTimer = setTimeout(() => this.kill('SIGKILL'), KILL_GRACE_MS)).unref();
  }

  finishAborted(): void {
    this.aborted = true;
    this.settle({ code: null, signal: null, timedOut: false, aborted: true });
  }

  startLaunched(launcher: LauncherProcess, file: string, args: string[]): void {
    let id = 0;
    this.cleanup = () => launcher.done(id);
    const sent = launcher.request(
      (n) => ((id = n), { t: 'run', id: n, file, args, env: this.o.env, ...(this.o.cwd ? { cwd: this.o.cwd } : {}), ...(this.o.niceness ? { niceness: this.o.niceness } : {}) }),
      { reply: (m, handle) => this.onReply(m, handle), launcherGone: () => this.fail(new Error(`the launcher exited while ${file} ran`)) },
      (err) => this.fail(new Error(`the launcher did not take the request: ${err.message}`)),
    );
    if (!sent) return this.fail(new Error('the launcher is stopped'));
    this.armed();
  }

  startDirect(file: string, args: string[]): void {
    const child = spawn(file, args, { env: this.o.env, cwd: this.o.cwd, stdio: ['ignore', 'pipe', 'pipe'], detached: GROUPS });
    child.on('error', (err) => this.fail(err));
    if (child.pid === undefined) return;
    if (this.o.niceness) setNiceness(child.pid, this.o.niceness);
    this.started(child.pid);
    this.read(child.stdout, this.o.onStdout);
    this.read(child.stderr, this.o.onStderr);
    child.on('exit', (code, signal) => this.exited(code, signal));
    this.armed();
  }

  private armed(): void {
    if (this.settled) return;
    this.o.signal?.addEventListener('abort', this.onAbort, { once: true });
    if (this.o.timeoutMs !== undefined) {
      this.timer = setTimeout(() => {
        this.timedOut = true;
        this.end();
      }, this.o.timeoutMs);
    }
  }

  private onReply(m: LauncherReply, handle: Readable | undefined): void {
    if (m.t === 'spawned' || m.t === 'stderr') {
      if (!handle) return this.fail(new Error('the launcher sent no pipe'));
      if (m.t === 'spawned') this.started(m.pid);
      this.read(handle, m.t === 'spawned' ? this.o.onStdout : this.o.onStderr);
    } else if (m.t === 'failed') this.fail(Object.assign(new Error(m.error), m.code ? { code: m.code } : {}));
    else this.exited(m.code, m.signal);
  }

  private started(pid: number): void {
    this.pid = pid;
    if (this.killWish) this.kill(this.killWish);
  }

  private read(stream: Readable, to: (chunk: Buffer) => void): void {
    this.streams.push(stream);
    stream.on('data', (chunk: Buffer) => this.settled || to(chunk));
    stream.on('error', () => {});
    stream.once('close', () => {
      this.open--;
      this.maybeEnd();
    });
    stream.once('end', () => stream.destroy());
  }

  private exited(code: number | null, signal: NodeJS.Signals | null): void {
    this.exit = { code, signal };
    this.maybeEnd();
    if (!this.settled) this.pipesTimer = setTimeout(() => this.streams.forEach((s) => s.destroy()), PIPES_AFTER_EXIT_MS);
  }

  private maybeEnd(): void {
    if (!this.exit || this.open > 0) return;
    this.settle({ ...this.exit, timedOut: this.timedOut, aborted: this.aborted });
  }

  private fail(err: Error): void {
    if (this.settled) return;
    // Started, then the launcher went: the program runs on unwatched, so it is ended.
    if (this.pid !== undefined && !this.exit) this.kill('SIGKILL');
    this.settled = true;
    this.release();
    this.reject(err);
  }

  private settle(end: RunEnd): void {
    if (this.settled) return;
    this.settled = true;
    this.release();
    this.resolve(end);
  }

  private release(): void {
    clearTimeout(this.timer);
    clearTimeout(this.pipesTimer);
    clearTimeout(this.killTimer);
    this.o.signal?.removeEventListener('abort', this.onAbort);
    this.cleanup();
  }
}

function setNiceness(pid: number, niceness: number): void {
  try {
    os.setPriority(pid, niceness);
  } catch {
    // Gone already, or a platform without priorities: it runs as it is.
  }
}
