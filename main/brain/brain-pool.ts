import { fork, type ChildProcess } from 'node:child_process';
import os from 'node:os';
import type { Logger } from '../logging/logger';
import { brainBaseEnvironment, brainCapability } from '../vault/brain-env';
import { brainChildOf } from './brain-fork';
import { brainExecArgv } from './brain-v8';
import type { BrainPrime } from './ipc-protocol';
import type { BrainChild } from './supervisor';

/** Options of a brain pool. */
export interface BrainPoolOptions {
  /** The brain entry to fork (entry.ts under tsx, or the built brain-entry.js). */
  entry: string;
  execArgv?: string[];
  /** Brains kept started ahead; 0 forks each brain when its session needs it. */
  size: number;
  /** After a brain is taken, how long to wait before starting its replacement (ms). */
  refillDelayMs?: number;
  logger?: Logger;
}

/** Pooled brains that died before being bound, in a row, after which the pool stops refilling. */
const MAX_EARLY_DEATHS = 3;
const BRAIN_NICENESS = 5;
/** Default pool size: `CORRAL_BRAIN_POOL`, else 2. */
export function brainPoolSize(): number {
  const v = Number(process.env.CORRAL_BRAIN_POOL);
  return process.env.CORRAL_BRAIN_POOL !== undefined && Number.isInteger(v) && v >= 0 ? Math.min(v, 64) : 2;
}

/**
 * Brain processes started ahead of need, so a new session's first model request does not wait
 * for a Node process to start and load the harness (about 100–300 ms here, far more on a busy
 * machine). A pooled brain is forked without a session and without any credential; `spawn`
 * binds the oldest one to a session by IPC (`bind`), handing it the session's model capability
 * then (session-scoped, revoked when that process exits), and starts a replacement in the
 * background. Each brain still serves one session and dies with it: crash isolation is
 * unchanged. With the pool empty (a burst of new sessions), `spawn` forks a brain at once.
 */
export class BrainPool {
  private readonly idle: ChildProcess[] = [];
  private earlyDeaths = 0;
  private stopped = false;
  private refillTimer?: NodeJS.Timeout;

  constructor(private readonly opts: BrainPoolOptions) {}

  /** Brains waiting now. */
  get waiting(): number {
    return this.idle.length;
  }

  /** Starts brains until the pool holds `size` (no-op when stopped or failing). */
  fill(): void {
    while (!this.stopped && this.idle.length < this.opts.size && this.earlyDeaths < MAX_EARLY_DEATHS) this.idle.push(this.startOne());
  }

  /**
   * A brain for the session: a pooled one bound to it, else one forked now. `prime` (read when
   * the bind is sent) gives it the log's start, the agent and the hands with the bind.
   */
  spawn(sessionId: string, prime?: () => BrainPrime | undefined): BrainChild {
    const pooled = this.idle.shift();
    // A pooled brain lived to be bound: pooled brains work (again), so refilling may go on.
    if (pooled) this.earlyDeaths = 0;
    const child = pooled ?? this.startOne();
    child.removeAllListeners('exit');
    const cap = brainCapability(sessionId);
    const brain = wrapBrain(child, sessionId, cap.release);
    const primed = prime?.();
    brain.send({ t: 'bind', sessionId, env: cap.env, ...(primed ? { prime: primed } : {}) });
    this.scheduleRefill();
    return brain;
  }

  /** Kills the brains that wait (bound ones belong to their supervisor). */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.refillTimer);
    for (const child of this.idle.splice(0)) child.kill('SIGKILL');
  }

  private scheduleRefill(): void {
    if (this.stopped || this.refillTimer || this.opts.size === 0) return;
    // Not at once: the brain just bound is making its first requests of the host, and a fork
    // (and the new process loading) would compete with them for the event loop and the CPU.
    this.refillTimer = setTimeout(() => {
      this.refillTimer = undefined;
      this.fill();
    }, this.opts.refillDelayMs ?? 1000);
    this.refillTimer.unref();
  }

  private startOne(): ChildProcess {
    const env = brainBaseEnvironment();
    // Its model URL (the host's proxy) comes with its capability at bind time, not the upstream's.
    delete env.ANTHROPIC_BASE_URL;
    // Inside Electron, fork runs the Electron binary: make it behave as Node.
    if (process.versions.electron) env.ELECTRON_RUN_AS_NODE = '1';
    const child = fork(this.opts.entry, [], { execArgv: brainExecArgv(this.opts.execArgv), env, stdio: ['ignore', 'inherit', 'inherit', 'ipc'], serialization: 'json' });
    if (child.pid) {
      try {
        os.setPriority(child.pid, BRAIN_NICENESS);
      } catch {
        // Not permitted on this system: equal priority then.
      }
    }
    child.on('error', (err) => console.error(`corral: pooled brain: ${err.message}`));
    // Died while waiting: dropped, and replaced unless pooled brains keep dying.
    child.on('exit', (code, signal) => {
      const i = this.idle.indexOf(child);
      if (i < 0) return;
      this.idle.splice(i, 1);
      this.earlyDeaths += 1;
      this.opts.logger?.warn({ pid: child.pid, code, signal }, 'pooled brain exited before it was bound');
      this.scheduleRefill();
    });
    return child;
  }
}

/** The supervisor's view of a bound brain (as forkBrain gives for a forked one). */
function wrapBrain(child: ChildProcess, sessionId: string, release: () => void): BrainChild {
  child.removeAllListeners('error');
  child.on('error', (err) => console.error(`corral: brain of ${sessionId}: ${err.message}`));
  child.once('exit', release).once('close', release);
  // Already dead (it died between being pooled and bound): the capability goes at once.
  if (child.exitCode !== null || child.signalCode !== null) release();
  return brainChildOf(child);
}
