import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import { commandEnv } from '../../child-env';
import { capParts, droppedLine, FULL_OUTPUT_LIMIT_BYTES, OutputCollector } from '../output-cap';
import { PGROUP_TOKEN_VAR, type ProcessGroupLedger } from '../pgroups';
import type { ExecuteOptions, ToolOutcome } from '../types';
import { errorOutcome, InputError, optBoolean, optNumber, optString } from '../tools/input';
import type { WorkDir } from './paths';
import type { SandboxedCommand } from './sandbox';
import { sessionsBelow, signalGroups, watchSandboxSession } from './sandbox-tree';

export const DEFAULT_BASH_TIMEOUT_MS = 120_000;
/** After SIGTERM, the group gets this long before SIGKILL. */
const KILL_GRACE_MS = 1_000;
/** After a kill, the call resolves within this long even if the shell has not been seen to exit. */
const SETTLE_MS = 250;
/** After the shell exits, wait until output has been quiet this long (or the pipes close). */
const QUIET_AFTER_EXIT_MS = 150;
/** …but no longer than this: a background job may keep the pipes open forever. */
const MAX_WAIT_AFTER_EXIT_MS = 2_000;
const MAX_TIMER_MS = 2 ** 31 - 1;

/** How commands are started, beyond the work folder. */
export interface BashLaunchOptions {
  /** Variables the environment config sets (on top of the allowlisted ones, see child-env.ts). */
  env?: Record<string, string>;
  /** Wraps a command for the sandbox; without it, commands run as they are. */
  sandbox?: (command: string, signal: AbortSignal | undefined) => Promise<SandboxedCommand>;
  /** Where each command's process group is on record while it runs. */
  ledger?: ProcessGroupLedger;
}

type StopReason = 'abort' | 'timeout' | 'dispose';

function groupExists(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Does process group `pgid` still have a running member? Zombies (dead, not yet reaped) do not count. */
export function groupAlive(pgid: number): boolean {
  if (!groupExists(pgid)) return false;
  // Something with that group id exists. Orphans are reaped by init, which may be slow to do
  // so; on Linux, look past zombies.
  if (process.platform !== 'linux') return true;
  try {
    for (const name of fs.readdirSync('/proc')) {
      if (!/^\d+$/.test(name)) continue;
      let stat: string;
      try {
        stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      } catch {
        continue;
      }
      // "pid (comm) state ppid pgrp …"; comm may contain spaces and parentheses.
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(pgrp) === pgid && state !== 'Z' && state !== 'X') return true;
    }
    return false;
  } catch {
    return true;
  }
}

function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // Already gone.
  }
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Runs `bash -c` commands in the work folder, each in its own process group. */
export class BashRunner {
  /** Calls in flight, by process group id. */
  private readonly running = new Map<number, { stop: (reason: StopReason) => void; done: Promise<unknown> }>();
  /** Groups whose shell finished but which left background jobs running. */
  private readonly lingering = new Set<number>();

  constructor(
    private readonly work: WorkDir,
    /** At most this much full output is kept for the UI (bytes); the middle beyond it is dropped. */
    private readonly fullOutputLimitBytes: number = FULL_OUTPUT_LIMIT_BYTES,
    private readonly launch: BashLaunchOptions = {},
  ) {}

  async run(input: Record<string, unknown>, opts: ExecuteOptions): Promise<ToolOutcome> {
    const command = optString(input, 'command', 'bash');
    const restart = optBoolean(input, 'restart', 'bash');
    const inputTimeout = optNumber(input, 'timeout_ms', 'bash');
    if (inputTimeout !== undefined && inputTimeout < 0) throw new InputError('Invalid input for bash: "timeout_ms" must not be negative.');
    if (command === undefined || command.trim() === '') {
      if (restart) {
        return {
          content: 'Nothing to restart: every bash call already runs in a fresh shell (no state carries over between calls).',
          isError: false,
          details: { restart: true },
        };
      }
      throw new InputError('Invalid input for bash: "command" is required and must be a non-empty string.');
    }
    const limits = [opts.timeoutMs, inputTimeout].filter((n): n is number => n !== undefined && n > 0);
    // setTimeout cannot wait longer than 2^31-1 ms (it would fire at once).
    const timeoutMs = Math.min(limits.length > 0 ? Math.min(...limits) : DEFAULT_BASH_TIMEOUT_MS, MAX_TIMER_MS);
    if (opts.signal?.aborted) {
      return errorOutcome('[interrupted: the call was aborted before the command started]', {
        exit_code: null, signal: null, duration_ms: 0, output_chars: 0, truncated: false, interrupted: true,
      });
    }
    fs.mkdirSync(this.work.real, { recursive: true, mode: 0o700 });
    let launch: Pick<SandboxedCommand, 'file' | 'args'> & { release?: () => void } = { file: 'bash', args: ['-c', command] };
    if (this.launch.sandbox) {
      try {
        launch = await this.launch.sandbox(command, opts.signal);
      } catch (err) {
        if (opts.signal?.aborted) {
          return errorOutcome('[interrupted: the call was aborted before the command started]', { exit_code: null, duration_ms: 0, interrupted: true });
        }
        return errorOutcome(`The command was not run: it could not be put in the sandbox (${(err as Error).message}).`, { sandbox_failed: true });
      }
    }
    return this.spawn(launch, timeoutMs, opts.signal);
  }

  private spawn(
    launch: Pick<SandboxedCommand, 'file' | 'args'> & { release?: () => void },
    timeoutMs: number,
    signal: AbortSignal | undefined,
  ): Promise<ToolOutcome> {
    const started = performance.now();
    const collector = new OutputCollector(this.fullOutputLimitBytes);
    const { ledger } = this.launch;
    const token = ledger?.newToken();
    let child: ChildProcess;
    try {
      child = spawn(launch.file, launch.args, {
        cwd: this.work.real,
        // An allowlist, never a filtered copy of the host's environment.
        env: { ...commandEnv(this.launch.env), ...(token ? { [PGROUP_TOKEN_VAR]: token } : {}) },
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
    } catch (err) {
      launch.release?.();
      return Promise.resolve(errorOutcome(`bash could not be started: ${(err as Error).message}`));
    }
    const pid = child.pid;
    // On record before anything else can happen, so that a host killed now leaves no orphan.
    if (pid !== undefined && token) ledger!.record(pid, token);
    // A sandboxed command's own session (bubblewrap --new-session), ended with the command.
    const sandboxSession = pid !== undefined && launch.release ? watchSandboxSession(pid) : undefined;

    let resolveDone!: (o: ToolOutcome) => void;
    const done = new Promise<ToolOutcome>((r) => (resolveDone = r));

    let finished = false;
    let stopReason: StopReason | undefined;
    let spawnError: Error | undefined;
    let exitCode: number | null = null;
    let exitSignal: NodeJS.Signals | null = null;
    let exited = false;
    const timers = new Set<NodeJS.Timeout>();
    const later = (ms: number, fn: () => void) => {
      const t = setTimeout(() => {
        timers.delete(t);
        fn();
      }, ms);
      timers.add(t);
      return t;
    };

    const decoders = { out: new StringDecoder('utf8'), err: new StringDecoder('utf8') };
    let quietTimer: NodeJS.Timeout | undefined;
    const onData = (dec: StringDecoder) => (buf: Buffer) => {
      collector.push(dec.write(buf), buf.length);
      if (exited && !stopReason && quietTimer) {
        clearTimeout(quietTimer);
        timers.delete(quietTimer);
        quietTimer = later(QUIET_AFTER_EXIT_MS, finish);
      }
    };
    child.stdout!.on('data', onData(decoders.out));
    child.stderr!.on('data', onData(decoders.err));

    const onAbort = () => stop('abort');
    const stop = (reason: StopReason) => {
      if (finished || stopReason) return;
      stopReason = reason;
      if (pid !== undefined) {
        // With the sandbox's own session (found now, while the outer bwrap is its parent).
        const groups = [pid, ...(sandboxSession?.sessions() ?? [])];
        signalGroups(groups, 'SIGTERM');
        // Not tied to this call's timers: the SIGKILL must still happen after we resolve.
        setTimeout(() => {
          signalGroups(groups, 'SIGKILL');
          ledger?.forget(pid);
        }, KILL_GRACE_MS);
      }
      later(SETTLE_MS, finish);
    };

    const finish = () => {
      if (finished) return;
      finished = true;
      for (const t of timers) clearTimeout(t);
      timers.clear();
      signal?.removeEventListener('abort', onAbort);
      child.stdout!.destroy();
      child.stderr!.destroy();
      collector.push(decoders.out.end());
      collector.push(decoders.err.end());
      if (pid !== undefined) {
        this.running.delete(pid);
        if (!stopReason && groupAlive(pid)) this.lingering.add(pid);
        else if (!stopReason) ledger?.forget(pid);
        for (const g of this.lingering) {
          if (!groupExists(g)) {
            this.lingering.delete(g);
            ledger?.forget(g);
          }
        }
      }
      resolveDone(this.outcome(collector, {
        started, pid, timeoutMs, stopReason, spawnError, exitCode, exitSignal,
      }));
    };

    child.on('error', (err) => {
      spawnError = err;
      launch.release?.();
      finish();
    });
    child.on('exit', (code, sig) => {
      sandboxSession?.end();
      launch.release?.();
      exited = true;
      exitCode = code;
      exitSignal = sig;
      if (stopReason) {
        // Killed: give the pipes a moment to drain, the settle timer is the backstop.
        later(20, finish);
        return;
      }
      quietTimer = later(QUIET_AFTER_EXIT_MS, finish);
      later(MAX_WAIT_AFTER_EXIT_MS, finish);
    });
    child.on('close', () => {
      if (exited) finish();
    });

    later(timeoutMs, () => stop('timeout'));
    signal?.addEventListener('abort', onAbort, { once: true });
    if (pid !== undefined) this.running.set(pid, { stop, done });
    return done;
  }

  private outcome(
    collector: OutputCollector,
    s: {
      started: number; pid: number | undefined; timeoutMs: number; stopReason: StopReason | undefined;
      spawnError: Error | undefined; exitCode: number | null; exitSignal: NodeJS.Signals | null;
    },
  ): ToolOutcome {
    const out = collector.finish();
    const duration_ms = Math.round(performance.now() - s.started);
    if (s.spawnError && !s.stopReason && s.exitCode === null && out.totalChars === 0) {
      return errorOutcome(`bash could not be started: ${s.spawnError.message}`, { duration_ms });
    }
    let status: string;
    switch (s.stopReason) {
      case 'abort':
        status = `[interrupted: the call was aborted after ${duration_ms.toLocaleString('en-US')} ms; the command's process group was killed]`;
        break;
      case 'timeout':
        status = `[timed out after ${s.timeoutMs.toLocaleString('en-US')} ms; the command's process group was killed]`;
        break;
      case 'dispose':
        status = "[interrupted: the hand was shut down; the command's process group was killed]";
        break;
      default:
        status = s.exitSignal ? `[killed by signal ${s.exitSignal}]` : `[exit code ${s.exitCode ?? 'unknown'}]`;
    }
    const cap = capParts(out.head, out.tail, out.droppedChars);
    const nl = (t: string) => (t === '' || t.endsWith('\n') ? '' : '\n');
    const content = cap.content + nl(cap.content) + status;
    const details: Record<string, unknown> = {
      exit_code: s.exitCode,
      signal: s.exitSignal,
      duration_ms,
      output_chars: out.totalChars,
      output_bytes: out.totalBytes,
      truncated: cap.truncated,
      pid: s.pid ?? null,
    };
    if (s.stopReason === 'timeout') details.timed_out = true;
    if (s.stopReason === 'abort' || s.stopReason === 'dispose') details.interrupted = true;
    const outcome: ToolOutcome = { content, isError: s.stopReason !== undefined, details };
    if (cap.truncated) {
      let full = out.head;
      if (out.droppedBytes > 0) {
        full += `${nl(full)}${droppedLine(out.droppedBytes, this.fullOutputLimitBytes)}\n${out.tail}`;
        details.full_output_dropped_bytes = out.droppedBytes;
        details.full_output_note = `The full output was ${out.totalBytes.toLocaleString('en-US')} bytes; its middle (${out.droppedBytes.toLocaleString('en-US')} bytes) was dropped to keep at most ${(this.fullOutputLimitBytes / 1024 / 1024).toLocaleString('en-US')} MiB.`;
      }
      outcome.fullOutput = full + nl(full) + status;
    }
    return outcome;
  }

  /** Kills every command still running and any background jobs earlier commands left behind. */
  async dispose(): Promise<void> {
    const calls = [...this.running.values()];
    const groups = [...this.lingering, ...this.running.keys()];
    // Lingering sandboxes' own sessions, found before anything is signalled (see stop()).
    const inner = groups.flatMap((g) => sessionsBelow(g));
    for (const c of calls) c.stop('dispose');
    this.lingering.clear();
    for (const g of groups) signalGroup(g, 'SIGTERM');
    signalGroups(inner, 'SIGKILL');
    await Promise.all(calls.map((c) => c.done));
    const deadline = Date.now() + KILL_GRACE_MS;
    let alive = groups.filter(groupAlive);
    while (alive.length > 0 && Date.now() < deadline) {
      await sleep(50);
      alive = alive.filter(groupAlive);
    }
    for (const g of alive) signalGroup(g, 'SIGKILL');
    for (const g of groups) this.launch.ledger?.forget(g);
  }
}
