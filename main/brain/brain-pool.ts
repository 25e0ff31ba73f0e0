import { fork } from 'node:child_process';
import os from 'node:os';
import type { Logger } from '../logging/logger';
import { firstCallsInFlight, onFirstCalls } from '../hands/first-calls';
import { brainBaseEnvironment, brainCapability } from '../vault/brain-env';
import { brainChildOf } from './brain-fork';
import { BrainLauncher, LAUNCHER_SUPPORTED, type BrainProcess } from './brain-launcher';
import { brainExecArgv } from './brain-v8';
import { POOLED_READY, type BrainPrime, type HostToBrain } from './ipc-protocol';
import type { BrainChild } from './running-brain';

/** Options of a brain pool. */
export interface BrainPoolOptions {
  /** The brain entry to fork (entry.ts under tsx, or the built brain-entry.js). */
  entry: string;
  execArgv?: string[];
  /** Brains kept started ahead; 0 forks each brain when its session needs it. */
  size: number;
  /**
   * When a taken brain is replaced: `'first-request'` (default) once the bound brain's first
   * model request is out (or `firstRequestWaitMs` passed), or after a fixed number of ms (how
   * the pool worked before; bench/first-turn-trace.ts compares the two).
   */
  refillAfter?: 'first-request' | number;
  /** How long a bound brain's first request is waited for before refilling anyway (ms). */
  firstRequestWaitMs?: number;
  /**
   * Brains still starting are paused (SIGSTOP/SIGCONT, not on Windows) while a bound brain has not
   * sent its first request: a Node start-up takes 100–250 ms of a core, which a bound brain
   * sharing it waited out (default true).
   */
  pauseStarting?: boolean;
  /**
   * Pooled brains wait at normal priority and are lowered to the niceness of every brain (5) once
   * their first model request is out (raising niceness needs no privilege, lowering it does):
   * a bound brain at niceness 5 lost the CPU to every other process on the way to its first
   * request. Default true; false starts them at 5, as before.
   */
  lowerAfterFirstRequest?: boolean;
  /**
   * Pooled brains run a first turn before they are ready (brain-warmup.ts; default true).
   * 'in-memory': with the warm-up's model in memory, not on loopback (the pool as it was, for bench/first-turn-trace.ts).
   */
  warmUp?: boolean | 'in-memory';
  logger?: Logger;
  /** Called as each pooled brain is forked (bench/first-turn-trace.ts lines forks up with sessions). */
  onFork?: () => void;
  /**
   * Brains are started by a launcher process (brain-launcher.ts), so the host's event loop never
   * waits for a process start (default, except on Windows); false forks them from the host. A
   * launcher given here is the caller's to stop.
   */
  launcher?: boolean | BrainLauncher;
}

/** Pooled brains that died before being bound, in a row, after which the pool stops refilling. */
const MAX_EARLY_DEATHS = 3;
const BRAIN_NICENESS = 5;
const CAN_PAUSE = process.platform !== 'win32';
/** Default pool size: `CORRAL_BRAIN_POOL`, else 2. */
export function brainPoolSize(): number {
  const v = Number(process.env.CORRAL_BRAIN_POOL);
  return process.env.CORRAL_BRAIN_POOL !== undefined && Number.isInteger(v) && v >= 0 ? Math.min(v, 64) : 2;
}

/** Brains run a little below the host (brain-fork.ts says why). */
function setNiceness(child: BrainProcess): void {
  if (!child.pid || child.exitCode !== null) return;
  try {
    os.setPriority(child.pid, BRAIN_NICENESS);
  } catch {
    // Not permitted on this system, or gone: as it is then.
  }
}

/** A pooled brain not yet bound: `ready` once it has loaded and warmed up its code. */
interface Waiting {
  child: BrainProcess;
  ready: boolean;
  paused: boolean;
}

const isReady = (m: unknown) => (m as { t?: unknown } | null)?.t === POOLED_READY.t;
/** Whether a brain's message carries its span.model_request_start (its model request is going out). */
function startsRequest(m: unknown): boolean {
  const msg = m as { t?: string; op?: string; args?: { events?: { type?: string }[] }; messages?: unknown[] };
  if (msg?.t === 'batch') return Array.isArray(msg.messages) && msg.messages.some(startsRequest);
  return msg?.t === 'req' && msg.op === 'emit' && Array.isArray(msg.args?.events) && msg.args.events.some((e) => e?.type === 'span.model_request_start');
}

/**
 * Brain processes started ahead of need, so a new session's first model request does not wait
 * for a Node process to start and load the harness (about 100–300 ms here, far more on a busy
 * machine). A pooled brain is forked without a session and without any credential, runs a first
 * turn in memory to compile its code, and says it is ready; `spawn` binds a ready one (else one
 * still starting, else forks) to a session by IPC (`bind`), handing it the session's model
 * capability then (session-scoped, revoked when that process exits). Each brain still serves
 * one session and dies with it: crash isolation is unchanged.
 *
 * The replacement is started only once the bound brain's first model request is out, and brains
 * still starting are paused meanwhile: a refill's start-up sharing the two cores with a bound
 * brain was the whole tail of a new session's first request (p95 ~200 ms against p50 ~15 ms,
 * bench/first-turn-trace.ts). With the pool empty (a burst of new sessions), `spawn` forks at once.
 */
export class BrainPool {
  private readonly idle: Waiting[] = [];
  /** Bound brains whose first model request is not out yet: refills wait, starting ones pause. */
  private readonly pending = new Set<BrainProcess>();
  private earlyDeaths = 0;
  private stopped = false;
  private refillTimer?: NodeJS.Timeout;
  /** A pooled hand's first call is in flight (first-calls.ts): no fork, starting brains paused. */
  private held = firstCallsInFlight();
  private readonly unwatch: () => void;
  private readonly launcher?: BrainLauncher;
  private readonly ownLauncher?: BrainLauncher;

  constructor(private readonly opts: BrainPoolOptions) {
    if (opts.launcher instanceof BrainLauncher) this.launcher = opts.launcher;
    else if ((opts.launcher ?? true) && LAUNCHER_SUPPORTED) this.launcher = this.ownLauncher = new BrainLauncher();
    this.unwatch = onFirstCalls((busy) => {
      this.held = busy;
      if (busy) {
        if (this.opts.pauseStarting ?? true) for (const w of this.idle) if (!w.ready && !w.paused) this.pause(w);
      } else this.resumeAndFill();
    });
  }

  /** Brains waiting now (ready or starting). */
  get waiting(): number {
    return this.idle.length;
  }

  /** Brains waiting that are ready (loaded and warmed up). */
  get ready(): number {
    return this.idle.filter((w) => w.ready).length;
  }

  /** Starts brains until the pool holds `size` (no-op when stopped, failing, or a bound brain is starting its request). */
  fill(): void {
    if (this.pending.size > 0 || this.held) return;
    while (!this.stopped && this.idle.length < this.opts.size && this.earlyDeaths < MAX_EARLY_DEATHS) this.idle.push(this.startOne());
  }

  /**
   * A brain for the session: a pooled one bound to it, else one forked now. `prime` (read when
   * the bind is sent) gives it the log's start, the agent and the hands with the bind.
   */
  spawn(sessionId: string, prime?: () => BrainPrime | undefined): BrainChild {
    const at = this.idle.findIndex((w) => w.ready);
    const [pooled] = this.idle.splice(at >= 0 ? at : 0, 1);
    // A pooled brain lived to be bound: pooled brains work (again), so refilling may go on.
    if (pooled) this.earlyDeaths = 0;
    if (pooled?.paused) this.resume(pooled);
    const child = pooled?.child ?? this.startOne().child;
    child.removeAllListeners('exit');
    const cap = brainCapability(sessionId);
    const brain = wrapBrain(child, sessionId, cap.release, () => this.awaitNextRequest(child));
    const primed = prime?.();
    brain.send({ t: 'bind', sessionId, env: cap.env, ...(primed ? { prime: primed } : {}) });
    this.awaitFirstRequest(child);
    return brain;
  }

  /** Kills the brains that wait (bound ones belong to their supervisor). */
  stop(): void {
    this.stopped = true;
    this.unwatch();
    clearTimeout(this.refillTimer);
    for (const w of this.idle.splice(0)) {
      // A paused process takes SIGKILL too; resumed anyway so nothing is left stopped.
      if (w.paused) this.resume(w);
      w.child.kill('SIGKILL');
    }
    this.pending.clear();
    this.ownLauncher?.stop();
  }

  /** Holds refills (and pauses start-ups) until the bound brain's first model request is out. */
  private awaitFirstRequest(child: BrainProcess): void {
    const after = this.opts.refillAfter ?? 'first-request';
    const lower = this.opts.lowerAfterFirstRequest ?? true;
    if (typeof after === 'number') {
      if (lower) setNiceness(child);
      return this.scheduleRefill(after);
    }
    this.pending.add(child);
    if (this.opts.pauseStarting ?? true) for (const w of this.idle) if (!w.ready && !w.paused) this.pause(w);
    // A session whose first turn calls no model (an interrupt, a tool confirmation) still refills.
    this.untilRequest(child, () => lower && setNiceness(child));
  }

  /**
   * A bound brain's new turn goes ahead of brains still starting: they are paused from the
   * user.message passed on until that brain's request is out, as for its first (bench:first-turn:
   * a refill starting at niceness 0 took the core from the bound brain, at 5, on its next turn).
   */
  private awaitNextRequest(child: BrainProcess): void {
    if (this.pending.has(child) || !(this.opts.pauseStarting ?? true) || !this.idle.some((w) => !w.ready && !w.paused)) return;
    this.pending.add(child);
    for (const w of this.idle) if (!w.ready && !w.paused) this.pause(w);
    // A turn that calls no model (an interrupt came first) lets them go on all the same.
    this.untilRequest(child);
  }

  /**
   * Holds `child` in `pending` until it starts a model request, exits, or firstRequestWaitMs
   * passes; then `then()`, and brains still starting go on once no bound brain is pending.
   */
  private untilRequest(child: BrainProcess, then: () => void = () => {}): void {
    const done = () => {
      child.off('message', onMessage);
      child.off('exit', done);
      clearTimeout(timer);
      if (!this.pending.delete(child)) return;
      then();
      // After the supervisor has logged the span this message carries (its listener comes later):
      // a fork holds the host's loop for a few ms.
      if (this.pending.size === 0) setImmediate(() => this.resumeAndFill());
    };
    const onMessage = (m: unknown) => startsRequest(m) && done();
    const timer = setTimeout(done, this.opts.firstRequestWaitMs ?? 1000);
    timer.unref();
    child.on('message', onMessage).once('exit', done);
  }

  /** Once no bound brain waits for its first request and no pooled hand's first call is in flight. */
  private resumeAndFill(): void {
    if (this.pending.size > 0 || this.held || this.stopped) return;
    for (const w of this.idle) if (w.paused) this.resume(w);
    this.fill();
  }

  private scheduleRefill(delayMs: number): void {
    if (this.stopped || this.refillTimer || this.opts.size === 0) return;
    this.refillTimer = setTimeout(() => {
      this.refillTimer = undefined;
      this.fill();
    }, delayMs);
    this.refillTimer.unref();
  }

  // Through the child's kill: a launched brain not started yet gets the signal as it starts.
  private pause(w: Waiting): void {
    if (!CAN_PAUSE || w.child.exitCode !== null) return;
    if (w.child.kill('SIGSTOP')) w.paused = true;
  }

  private resume(w: Waiting): void {
    w.paused = false;
    w.child.kill('SIGCONT');
  }

  private startOne(): Waiting {
    const env = brainBaseEnvironment();
    // Its model URL (the host's proxy) comes with its capability at bind time, not the upstream's.
    delete env.ANTHROPIC_BASE_URL;
    // Inside Electron, fork runs the Electron binary: make it behave as Node.
    if (process.versions.electron) env.ELECTRON_RUN_AS_NODE = '1';
    this.opts.onFork?.();
    const args = this.opts.warmUp === false ? ['', '--no-warm-up'] : this.opts.warmUp === 'in-memory' ? ['', '--warm-up-in-memory'] : [];
    const execArgv = brainExecArgv(this.opts.execArgv);
    const lowNow = this.opts.lowerAfterFirstRequest === false;
    const child: BrainProcess = this.launcher
      ? this.launcher.spawn(process.execPath, [...execArgv, this.opts.entry, ...args], env, lowNow ? BRAIN_NICENESS : undefined)
      : fork(this.opts.entry, args, { execArgv, env, stdio: ['ignore', 'inherit', 'inherit', 'ipc'], serialization: 'json' });
    const w: Waiting = { child, ready: false, paused: false };
    if (lowNow && !this.launcher) setNiceness(child);
    // A stopped pool's brains that never started (its launcher ended with it) are no news.
    child.on('error', (err) => this.stopped || console.error(`corral: pooled brain: ${err.message}`));
    const onReady = (m: unknown) => {
      if (!isReady(m)) return;
      w.ready = true;
      child.off('message', onReady);
    };
    child.on('message', onReady);
    // Died while waiting: dropped, and replaced unless pooled brains keep dying.
    child.on('exit', (code, signal) => {
      const i = this.idle.indexOf(w);
      if (i < 0) return;
      this.idle.splice(i, 1);
      this.earlyDeaths += 1;
      this.opts.logger?.warn({ pid: child.pid, code, signal }, 'pooled brain exited before it was bound');
      this.scheduleRefill(1000);
    });
    return w;
  }
}

/** Whether a message to a brain passes on a user's message (a new turn). */
function startsTurn(m: HostToBrain): boolean {
  if (m.t === 'batch') return m.messages.some(startsTurn);
  return m.t === 'events' && m.events.some((e) => e.type === 'user.message');
}

/**
 * The supervisor's view of a bound brain (as forkBrain gives for a forked one); `onTurn` hears of
 * each user's message passed on to it.
 */
function wrapBrain(child: BrainProcess, sessionId: string, release: () => void, onTurn: () => void): BrainChild {
  child.removeAllListeners('error');
  child.on('error', (err) => console.error(`corral: brain of ${sessionId}: ${err.message}`));
  child.once('exit', release).once('close', release);
  // Already dead (it died between being pooled and bound): the capability goes at once.
  if (child.exitCode !== null || child.signalCode !== null) release();
  const base = brainChildOf(child);
  // A brain bound while still starting says it is ready after its bind: not the supervisor's business.
  return {
    send: (m) => {
      if (startsTurn(m)) onTurn();
      base.send(m);
    },
    onMessage: (l) => base.onMessage((m) => isReady(m) || l(m)),
    onExit: base.onExit,
    kill: base.kill,
    get pid() {
      return base.pid;
    },
  };
}
